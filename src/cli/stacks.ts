// `svc stacks` (issue 32): thin calls of /api/stacks. `svc stacks` lists them; `show NAME` a stack's
// services with status and its last deploy; `create NAME -f FILE` (or `--template T --input K=V`) and
// `update NAME -f FILE` print the plan per service (with --dry-run only the plan); `deploy`, `rollback`,
// `delete [--purge]`. A stack is named on the command line and found by name in GET /api/stacks.
import { readFileSync } from 'node:fs';
import { formatTable } from './apps.js';
import { CliError, type Client } from './client.js';
import { printJson } from './output.js';

type Write = (s: string) => void;
const stdout: Write = (s) => void process.stdout.write(s);

export const STACK_ACTIONS = ['list', 'show', 'create', 'update', 'deploy', 'rollback', 'delete'] as const;
export type StackAction = (typeof STACK_ACTIONS)[number];

export interface StacksOptions {
  action: StackAction;
  name?: string;
  file?: string;
  template?: string;
  /** `KEY=VALUE` (create: variables; `--secret`: secret ones; `--input`: a template's inputs). */
  vars: string[];
  secrets: string[];
  inputs: string[];
  services: string[];
  dryRun: boolean;
  purge: boolean;
  json: boolean;
}

/** The words and flags of `svc stacks ...` as a request; a usage problem is a sentence (exit 2). */
export function parseStacksArgs(pos: string[], v: Record<string, unknown>): StacksOptions | string {
  const [word = 'list', name, extra] = pos;
  if (!(STACK_ACTIONS as readonly string[]).includes(word)) return `unknown action "${word}": ${STACK_ACTIONS.join(', ')}`;
  const action = word as StackAction;
  const list = (k: string) => (Array.isArray(v[k]) ? (v[k] as string[]) : typeof v[k] === 'string' ? [v[k] as string] : []);
  const o: StacksOptions = {
    action, name, file: v.file as string | undefined, template: v.template as string | undefined,
    vars: list('var'), secrets: list('secret'), inputs: list('input'), services: list('service'),
    dryRun: !!v['dry-run'], purge: !!v.purge, json: !!v.json,
  };
  if (action === 'list') return name === undefined ? o : `unexpected argument "${name}"`;
  if (name === undefined) return 'missing argument NAME';
  if (extra !== undefined) return `unexpected argument "${extra}"`;
  const only = (allowed: string[]) => {
    const given = ['file', 'template', 'var', 'secret', 'input', 'service', 'dry-run', 'purge'].filter((k) => v[k] !== undefined && v[k] !== false && !(Array.isArray(v[k]) && (v[k] as unknown[]).length === 0));
    const wrong = given.find((k) => !allowed.includes(k));
    return wrong ? `--${wrong} does not apply to ${action}` : undefined;
  };
  const problem =
    action === 'create' ? only(['file', 'template', 'var', 'secret', 'input', 'dry-run'])
    : action === 'update' ? only(['file', 'dry-run'])
    : action === 'deploy' ? only(['service'])
    : action === 'delete' ? only(['purge'])
    : only([]);
  if (problem) return problem;
  if (action === 'create' && (o.file === undefined) === (o.template === undefined)) return 'give -f FILE (a Compose file) or --template NAME';
  if (action === 'create' && o.template !== undefined && (o.vars.length > 0 || o.secrets.length > 0)) return '--var and --secret do not apply with --template (use --input)';
  if (action === 'create' && o.file !== undefined && o.inputs.length > 0) return '--input applies with --template only';
  if (action === 'update' && o.file === undefined) return '-f FILE is required';
  for (const kv of [...o.vars, ...o.secrets, ...o.inputs]) if (!/^[^=]+=/.test(kv)) return `"${kv}" is not KEY=VALUE`;
  return o;
}

const pairs = (list: string[]) => list.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const);

interface ServiceJson { service: string; app: string; image: string | null; status: string; serving: boolean; status_reason: string | null; replicas: number; route: { domain?: string; published_port?: number; port: number } | null }
interface DeployJson { id: number; status: string; trigger: string; error: string | null; steps: { service: string; action: string; status: string; changes: string[] }[]; created_at: string }
interface StackJson { id: number; name: string; owner: string; services: ServiceJson[]; variables: { key: string; value: string | null; is_secret: boolean }[]; last_deploy: DeployJson | null }
interface PlanJson { ok: boolean; services: { service: string; action: string; changes: string[]; stop_first: boolean; problems: { key: string; message: string }[] }[]; warnings: string[] }

const SIGN: Record<string, string> = { create: '+', change: '~', unchanged: '=', remove: '-', refused: '!' };

/** A plan as lines, one per service: what a deploy would do to it. */
export function formatStackPlan(plan: PlanJson): string {
  const lines = plan.services.map((s) => {
    const what = s.action === 'change' ? `: ${s.changes.join(', ')}` : s.action === 'refused' ? `: ${s.problems.map((p) => `${p.key}: ${p.message}`).join('; ')}` : '';
    return `${SIGN[s.action] ?? '?'} ${s.service} ${s.action}${what}${(s.action === 'create' || s.action === 'change') && s.stop_first ? ' (stopped first)' : ''}`;
  });
  for (const w of plan.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n') + '\n';
}

const route = (r: ServiceJson['route']) => (!r ? '-' : r.domain ? `${r.domain} -> ${r.port}` : `:${r.published_port} -> ${r.port}`);

async function stackByName(client: Client, name: string): Promise<StackJson> {
  const all = await client.json<StackJson[]>('GET', '/api/stacks');
  const s = all.find((x) => x.name === name);
  if (!s) throw new CliError(`no stack named ${name}`);
  return s;
}

function readCompose(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`${file}: cannot read the file`);
  }
}

export async function stacksCommand(client: Client, o: StacksOptions, write: Write = stdout): Promise<number> {
  if (o.action === 'list') {
    const list = await client.json<StackJson[]>('GET', '/api/stacks');
    if (o.json) return printJson(list, write), 0;
    const status = (s: StackJson) => (s.last_deploy && ['pending', 'running'].includes(s.last_deploy.status) ? 'deploying' : s.services.every((x) => x.status === 'active') && s.services.length > 0 ? 'active' : 'not ready');
    write(formatTable([['NAME', 'STATUS', 'SERVICES', 'LAST DEPLOY'], ...list.map((s) => [s.name, status(s), s.services.map((x) => x.service).join(','), s.last_deploy ? `#${s.last_deploy.id} ${s.last_deploy.status}` : '-'])]));
    return 0;
  }
  const name = o.name!;
  if (o.action === 'create') {
    const path = o.template !== undefined ? `/api/templates/${encodeURIComponent(o.template)}/stacks` : '/api/stacks';
    const body = o.template !== undefined
      ? { name, inputs: Object.fromEntries(pairs(o.inputs)) }
      : { name, compose: readCompose(o.file!), variables: [...pairs(o.vars).map(([key, value]) => ({ key, value })), ...pairs(o.secrets).map(([key, value]) => ({ key, value, is_secret: true }))] };
    const r = await client.json<{ plan: PlanJson; deploy?: DeployJson | null; id?: number }>('POST', `${path}${o.dryRun ? '?dry_run=true' : ''}`, body);
    if (o.json) return printJson(r, write), 0;
    write(formatStackPlan(r.plan));
    write(o.dryRun ? '(dry run: nothing changed)\n' : `stack ${name} created; stack deploy #${r.deploy?.id} queued\n`);
    return 0;
  }
  const stack = await stackByName(client, name);
  const base = `/api/stacks/${stack.id}`;
  switch (o.action) {
    case 'show': {
      if (o.json) return printJson(stack, write), 0;
      write(`stack ${stack.name} (owner ${stack.owner})\n`);
      write(formatTable([['SERVICE', 'APP', 'STATUS', 'IMAGE', 'ROUTE', 'REPLICAS'], ...stack.services.map((s) => [s.service, s.app, s.status, s.image ?? '-', route(s.route), String(s.replicas)])]));
      const d = stack.last_deploy;
      if (d) {
        write(`last deploy #${d.id} (${d.trigger}) ${d.status}${d.error ? `: ${d.error}` : ''}\n`);
        for (const s of d.steps) write(`  ${s.service} ${s.action} ${s.status}${s.changes.length ? ` (${s.changes.join(', ')})` : ''}\n`);
      }
      if (stack.variables.length > 0) write(`variables: ${stack.variables.map((v) => (v.is_secret ? `${v.key} (secret)` : v.key)).join(', ')}\n`);
      return 0;
    }
    case 'update': {
      const r = await client.json<{ plan: PlanJson; deploy?: DeployJson | null }>('PUT', `${base}${o.dryRun ? '?dry_run=true' : ''}`, { compose: readCompose(o.file!) });
      if (o.json) return printJson(r, write), 0;
      write(formatStackPlan(r.plan));
      write(o.dryRun ? '(dry run: nothing changed)\n' : `stack deploy #${r.deploy?.id} queued\n`);
      return 0;
    }
    case 'deploy':
    case 'rollback': {
      const d = await client.json<DeployJson>('POST', o.action === 'deploy' ? `${base}/deploys` : `${base}/deploys/rollback`, o.action === 'deploy' && o.services.length > 0 ? { services: o.services } : {});
      if (o.json) return printJson(d, write), 0;
      write(`stack deploy #${d.id} ${d.status}: ${d.steps.map((s) => `${s.service} ${s.action}`).join(', ') || 'nothing changed'}\n`);
      return 0;
    }
    case 'delete':
      await client.json('DELETE', `${base}${o.purge ? '?purge=true' : ''}`);
      write(`stack ${name} deleted${o.purge ? ' with its volumes' : '; its volumes are kept'}\n`);
      return 0;
  }
  return 0;
}
