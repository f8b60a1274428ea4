// The stacks command (issue 32): create, update, deploy, roll back and delete a stack, for the REST API
// (and the CLI and manifests through the same functions). A stack's Compose file is loaded (the loader in
// src/stacks/compose/, given as `loadCompose`), each service becomes an app row `<stack>-<service>` with
// `stack_id` and its definition (src/stacks/service-spec.ts), and a stack deploy lists, in depends_on
// order, the services whose definition differs from the one running; the stack reconciler (`stack:<name>`)
// walks it. `?dry_run=true` computes the same plan and writes nothing. See docs/decisions/0046-stack-services-are-apps.md.
import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { keyOf } from '../controller/types.js';
import { conflict, DomainError, invalid, notFound, unprocessable } from '../errors.js';
import { getApp } from '../store/apps.js';
import { getDeploy } from '../store/deploys.js';
import { tx, type Db } from '../store/db.js';
import { guarded } from './app-rules.js';
import {
  apps, nowIso, serviceLinks, stacks, stackVarHistory, stackVars, type AppRow, type Owner, type StackDeployRow, type StackDeployStep, type StackDeployTrigger, type StackRow,
} from '../store/schema/index.js';
import {
  createStackDeploy, getStack, getStackByName, listStackDeploys, listStackVars, resolveStackVars, stackApps, stackVarValue,
} from '../store/stacks.js';
import { trashAppVolumes } from '../volumes/dirs.js';
import type { ComposeInput, ComposeLoad, ComposeProblem, ComposeStack, StackService } from '../stacks/model.js';
import { canonicalJson, parseServiceSpec, serviceAppFields, serviceAppName, serviceChanges, stopsFirst, type StackServiceSpec } from '../stacks/service-spec.js';
import { APP_DEFAULTS, reservedPorts } from './apps.js';
import type { CommandCtx, Origin } from './context.js';
import { envKeySchema, envValueSchema, nameSchema } from './fields.js';
import { parseInput } from './parse.js';
import { BRANCH_RE, repoUrlProblem } from '../build/repo-url.js';
import { envKeys, kindOf } from '../catalog/catalog.js';
import { getServiceByName } from '../store/services.js';
import { canonicalJobs, DEFAULT_JOB_TIMEOUT_SECONDS, jobsSchema } from './workload-fields.js';

/** Reads a Compose file into svc's model (src/stacks/compose/load.ts); given by the composition root. */
export type ComposeLoader = (input: ComposeInput) => ComposeLoad;
export type StackCtx = CommandCtx & { loadCompose?: ComposeLoader };

const variableSchema = z.object({ key: envKeySchema, value: envValueSchema.optional(), is_secret: z.boolean().optional(), required: z.boolean().optional() }).strict();
const fields = {
  compose: z.string().min(1).max(512 * 1024).nullable(),
  repo_url: z.string().superRefine((v, ctx) => {
    const problem = repoUrlProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).nullable(),
  branch: z.string().regex(BRANCH_RE, 'must be a git branch name'),
  compose_path: z.string().min(1).max(1024).regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\x00-\x1f\x7f]+$/, 'must be a relative path inside the repository'),
  /** The complete list of the stack's variables (on update: keys left out are deleted). */
  variables: z.array(variableSchema).max(500),
};
/** Stack names are app names, short enough for `<stack>-<service>` to stay one. */
const stackNameSchema = nameSchema.refine((n) => n.length <= 40, 'must be at most 40 characters');
export const createStackSchema = z.object(fields).partial().extend({ name: stackNameSchema }).strict();
export const updateStackSchema = z.object(fields).partial().extend({ name: z.unknown().optional() }).strict();
export const stackDeploySchema = z.object({ services: z.array(z.string().min(1).max(63)).max(200).optional() }).strict();

/** One service in a plan (API.md "Stacks"): what a deploy would do to it. */
export interface ServicePlan {
  service: string;
  app: string | null;
  action: 'create' | 'change' | 'unchanged' | 'remove' | 'refused';
  /** Compose keys that differ from the running definition (`change`). */
  changes: string[];
  stop_first: boolean;
  problems: ComposeProblem[];
}
export interface StackPlan {
  ok: boolean;
  services: ServicePlan[];
  /** Problems of the file not tied to one service. */
  problems: ComposeProblem[];
  warnings: string[];
}

export interface StackResult {
  stack: StackRow;
  plan: StackPlan;
  deploy: StackDeployRow | null;
}

type Variables = z.infer<typeof variableSchema>[];

/** Creates a stack; with `dryRun` only the plan. 400 naming the service and key when the file cannot run. */
export function createStack(ctx: StackCtx, raw: unknown, origin: Origin, opts: { dryRun?: boolean; owner?: Owner; changedBy?: string | null } = {}): StackResult {
  const input = parseInput(createStackSchema, raw);
  assertOneSource(input.compose ?? null, input.repo_url ?? null);
  const { db } = ctx;
  if (getStackByName(db, input.name)) throw conflict(`a stack named ${input.name} already exists`, { field: 'name' });
  if (db.select({ id: apps.id }).from(apps).where(eq(apps.name, input.name)).get()) throw conflict(`an app named ${input.name} exists: a stack's volumes would share its directory`, { field: 'name' });
  const variables = input.variables ?? [];
  const values = Object.fromEntries(variables.map((v) => [v.key, v.value ?? '']));
  const secrets = variables.filter((v) => v.is_secret && v.value).map((v) => v.value!);
  const source = { compose: input.compose ?? null, repoUrl: input.repo_url ?? null };
  const plan = planFor(ctx, input.name, null, source, values, secrets);
  if (opts.dryRun) return { stack: draftStack(input.name, source, input.branch, input.compose_path), plan, deploy: null };
  refuseUnlessOk(plan);
  const result = guarded(() =>
    tx(db, () => {
      const stack = db
        .insert(stacks)
        .values({ name: input.name, compose: source.compose, repoUrl: source.repoUrl, branch: input.branch ?? 'main', composePath: input.compose_path ?? 'docker-compose.yml', owner: opts.owner ?? 'rest' })
        .returning()
        .get();
      writeVariables(ctx, stack.id, variables, opts.changedBy ?? null, false);
      const deploy = applyPlan(ctx, stack, plan, 'create', origin);
      return { stack, deploy };
    }),
  );
  announce(ctx, result.stack.name, planApps(plan));
  ctx.log.info('stack created', { stack: result.stack.name, origin, services: plan.services.length });
  return { ...result, plan };
}

/** Changes the file or the variables; with `dryRun` only the plan. Only changed services are deployed. */
export function updateStack(ctx: StackCtx, id: number, raw: unknown, origin: Origin, opts: { dryRun?: boolean; changedBy?: string | null; trigger?: StackDeployTrigger } = {}): StackResult {
  const input = parseInput(updateStackSchema, raw);
  if (input.name !== undefined) throw invalid('name is immutable; create a new stack instead', { issues: [{ path: 'name', message: 'immutable' }] });
  const { db } = ctx;
  const current = getStack(db, id);
  if (!current) throw notFound('stack');
  const source = {
    compose: input.compose !== undefined ? input.compose : current.compose,
    repoUrl: input.repo_url !== undefined ? input.repo_url : current.repoUrl,
  };
  // Setting one source clears the other.
  if (input.compose && input.repo_url === undefined) source.repoUrl = null;
  if (input.repo_url && input.compose === undefined) source.compose = null;
  assertOneSource(source.compose, source.repoUrl);
  const { values, secrets } = input.variables ? variablesOf(ctx, id, input.variables) : resolveStackVars(db, ctx.sealer, id);
  const plan = planFor(ctx, current.name, current.id, source, values, secrets);
  const next: StackRow = { ...current, compose: source.compose, repoUrl: source.repoUrl, branch: input.branch ?? current.branch, composePath: input.compose_path ?? current.composePath };
  if (opts.dryRun) return { stack: next, plan, deploy: null };
  refuseUnlessOk(plan);
  const removed: string[] = [];
  const result = guarded(() =>
    tx(db, () => {
      const changedVars = input.variables ? writeVariables(ctx, id, input.variables, opts.changedBy ?? null, true) : false;
      const changedFile = source.compose !== current.compose || source.repoUrl !== current.repoUrl || next.branch !== current.branch || next.composePath !== current.composePath;
      const stack = db
        .update(stacks)
        .set({ compose: next.compose, repoUrl: next.repoUrl, branch: next.branch, composePath: next.composePath, configVersion: current.configVersion + (changedVars || changedFile ? 1 : 0), updatedAt: nowIso() })
        .where(eq(stacks.id, id))
        .returning()
        .get();
      removed.push(...plan.services.filter((s) => s.action === 'remove' && s.app).map((s) => s.app!));
      const deploy = applyPlan(ctx, stack, plan, opts.trigger ?? 'update', origin);
      return { stack, deploy };
    }),
  );
  announce(ctx, result.stack.name, [...removed, ...planApps(plan)]);
  return { ...result, plan };
}

/**
 * A deploy of the stack as it is: the services whose running definition differs from the file's (after a
 * variable change, or a failed deploy), plus those named in `services` (deployed again even if unchanged).
 */
export function deployStack(ctx: StackCtx, id: number, raw: unknown, origin: Origin): StackResult {
  const input = parseInput(stackDeploySchema, raw ?? {});
  const { db } = ctx;
  const stack = getStack(db, id);
  if (!stack) throw notFound('stack');
  const { values, secrets } = resolveStackVars(db, ctx.sealer, id);
  const plan = planFor(ctx, stack.name, id, { compose: stack.compose, repoUrl: stack.repoUrl }, values, secrets);
  refuseUnlessOk(plan);
  for (const name of input.services ?? []) {
    const entry = plan.services.find((s) => s.service === name);
    if (!entry) throw invalid(`service ${name} is not in the stack`, { service: name, key: 'services' });
    if (entry.action === 'unchanged') Object.assign(entry, { action: 'change', changes: ['(redeploy)'] });
  }
  const deploy = guarded(() => tx(db, () => applyPlan(ctx, stack, plan, 'manual', origin)));
  announce(ctx, stack.name, planApps(plan));
  return { stack, plan, deploy };
}

/** Runs the Compose file of the stack's previous successful deploy again (409 without one). */
export function rollbackStack(ctx: StackCtx, id: number, origin: Origin): StackResult {
  const { db } = ctx;
  const stack = getStack(db, id);
  if (!stack) throw notFound('stack');
  // The newest successful deploy that ran another file than the stack's current one.
  const text = listStackDeploys(db, id)
    .filter((d) => d.status === 'success' && d.composeSealed)
    .map((d) => ctx.sealer.open(d.composeSealed!))
    .find((t) => t !== stack.compose);
  if (!text) throw conflict('the stack has no earlier successful deploy of another file to roll back to');
  return updateStack(ctx, id, { compose: text }, origin, { trigger: 'rollback' });
}

/**
 * Deletes the stack: its service apps (their containers and routes go with their keys), its variables,
 * deploys and events; the stack reconciler removes its networks once the containers are gone. Volumes
 * stay unless `purge` (moved to the trash at once, as for apps).
 */
export function deleteStack(ctx: StackCtx, id: number, origin: Origin, opts: { purge?: boolean } = {}): void {
  const { db } = ctx;
  const stack = getStack(db, id);
  if (!stack) throw notFound('stack');
  const names = tx(db, () => {
    const rows = stackApps(db, id);
    if (rows.length > 0) db.delete(apps).where(inArray(apps.id, rows.map((r) => r.id))).run();
    db.delete(stacks).where(eq(stacks.id, id)).run();
    return rows.map((r) => r.name);
  });
  const purged = opts.purge ? trashAppVolumes(ctx.config.dataDir, stack.name, stack.id, ctx.now().getTime()) : false;
  announce(ctx, stack.name, names);
  ctx.log.info('stack deleted', { stack: stack.name, origin, services: names.length, volumes_purged: purged });
}

/** A stack variable's plaintext (the reveal endpoint). */
export function revealStackVar(ctx: Pick<CommandCtx, 'db' | 'sealer'>, id: number, key: string): { key: string; value: string } {
  if (!getStack(ctx.db, id)) throw notFound('stack');
  const row = listStackVars(ctx.db, id).find((v) => v.key === key);
  if (!row) throw notFound('stack variable');
  return { key, value: stackVarValue(ctx.sealer, row) };
}

// --- the plan ---

/** Loads the file and compares each service with what runs. Never writes. */
function planFor(ctx: StackCtx, name: string, stackId: number | null, source: { compose: string | null; repoUrl: string | null }, values: Record<string, string>, secrets: string[]): StackPlan {
  if (source.compose === null) {
    throw unprocessable('not_supported', 'a stack from a repository (repo_url) is not deployed yet by this svc: give the Compose file as `compose`');
  }
  if (!ctx.loadCompose) throw new DomainError('unavailable', 'unavailable', 'this svc has no Compose loader');
  if (ctx.config.runtime.kind === 'swarm') throw conflict('stacks run on one Docker engine only (SVC_RUNTIME=docker) in this svc');
  const load = ctx.loadCompose({ text: source.compose, variables: values });
  const existing = new Map<string, AppRow>();
  for (const row of stackId === null ? [] : stackApps(ctx.db, stackId)) existing.set(row.name, row);
  if (!load.ok) {
    const services = [...new Set(load.problems.map((p) => p.service).filter((s): s is string => !!s))].sort();
    return {
      ok: false,
      services: services.map((s) => ({ service: s, app: serviceAppName(name, s) ?? null, action: 'refused', changes: [], stop_first: false, problems: load.problems.filter((p) => p.service === s) })),
      problems: load.problems.filter((p) => !p.service),
      warnings: [],
    };
  }
  const plans = planServices(ctx, name, stackId, load.stack, existing, secrets);
  return { ok: plans.every((p) => p.action !== 'refused'), services: plans, problems: [], warnings: load.warnings };
}

function planServices(ctx: StackCtx, stack: string, stackId: number | null, compose: ComposeStack, existing: Map<string, AppRow>, secrets: string[]): ServicePlan[] {
  const { db } = ctx;
  const out: ServicePlan[] = [];
  const seen = new Set<string>();
  const reserved = reservedPorts(ctx.config);
  for (const s of compose.services) {
    const app = serviceAppName(stack, s.name);
    const problems: ComposeProblem[] = [];
    if (!app) problems.push({ service: s.name, key: 'name', message: `the service name with the stack's makes no valid app name (${stack}-${s.name}: a-z, 0-9 and -, at most 63 characters)` });
    if (!s.image) problems.push({ service: s.name, key: 'build', message: 'a service without `image` (built from source) is not deployed yet by svc' });
    if (s.route?.kind === 'port' && reserved.includes(s.route.publishedPort)) problems.push({ service: s.name, key: 'ports', message: `port ${s.route.publishedPort} is used by svc itself` });
    const row = app ? existing.get(app) : undefined;
    if (app && !row) {
      const other = db.select({ id: apps.id, stackId: apps.stackId }).from(apps).where(eq(apps.name, app)).get();
      if (other && (stackId === null || other.stackId !== stackId)) problems.push({ service: s.name, key: 'name', message: `an app named ${app} already exists` });
    }
    if (s.route?.kind === 'domain') {
      const other = db.select({ name: apps.name }).from(apps).where(eq(apps.domain, s.route.domain)).get();
      if (other && other.name !== app) problems.push({ service: s.name, key: 'x-svc.domain', message: `domain ${s.route.domain} is already used by app ${other.name}` });
    }
    if (s.route?.kind === 'port') {
      const other = db.select({ name: apps.name }).from(apps).where(eq(apps.fallbackPort, s.route.publishedPort)).get();
      if (other && other.name !== app) problems.push({ service: s.name, key: 'ports', message: `port ${s.route.publishedPort} is already used by app ${other.name}` });
    }
    problems.push(...linkProblems(ctx, s), ...jobProblems(s));
    if (app) seen.add(app);
    if (problems.length > 0) {
      out.push({ service: s.name, app: app ?? null, action: 'refused', changes: [], stop_first: false, problems });
      continue;
    }
    const running = row ? runningService(ctx, row) : undefined;
    const changes = running ? serviceChanges(running, s) : [];
    const action: ServicePlan['action'] = !running ? 'create' : changes.length > 0 ? 'change' : 'unchanged';
    out.push({ service: s.name, app: app!, action, changes: changes.map((c) => redactKey(c, s, secrets)), stop_first: stopsFirst(s), problems: [] });
  }
  for (const [name, row] of existing) {
    if (seen.has(name)) continue;
    const spec = row.stackService ? parseServiceSpec(ctx.sealer.open(row.stackService)) : undefined;
    out.push({ service: spec?.service.name ?? name, app: name, action: 'remove', changes: [], stop_first: false, problems: [] });
  }
  return out;
}

/** `x-svc.links`: each names a live managed service, and no two inject the same variable. */
function linkProblems(ctx: StackCtx, s: StackService): ComposeProblem[] {
  const out: ComposeProblem[] = [];
  const taken = new Map<string, string>();
  s.svc.links.forEach((l, i) => {
    const service = getServiceByName(ctx.db, l.service);
    if (!service || service.deletedAt) return out.push({ service: s.name, key: `x-svc.links[${i}].service`, message: `there is no svc service named ${l.service}: create it first (svc services)` });
    for (const k of envKeys(kindOf(service.type), l.alias)) {
      const other = taken.get(k) ?? (k in s.environment ? 'environment' : undefined);
      if (other) return out.push({ service: s.name, key: `x-svc.links[${i}].alias`, message: `the variable ${k} would also come from ${other}; choose another alias` });
      taken.set(k, `the link to ${l.service}`);
    }
  });
  return out;
}

/** `x-svc.jobs` as the app's jobs (the apps' own rules: a cron schedule, at most one run at a time). */
const stackJobs = (s: StackService) =>
  s.svc.jobs.map((j) => ({ name: j.name, schedule: j.schedule, command: j.command, timeout_seconds: j.timeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS, concurrency: 'forbid' as const }));

function jobProblems(s: StackService): ComposeProblem[] {
  const parsed = jobsSchema.safeParse(stackJobs(s));
  return parsed.success ? [] : parsed.error.issues.map((i) => ({ service: s.name, key: ['x-svc.jobs', ...i.path].join('.').replace(/\.(\d+)/g, '[$1]'), message: i.message }));
}

/** The app's links are the service's `x-svc.links` (written with the definition; the deploy injects their variables). */
function writeLinks(ctx: StackCtx, appId: number, s: StackService): void {
  ctx.db.delete(serviceLinks).where(eq(serviceLinks.appId, appId)).run();
  for (const l of s.svc.links) {
    const service = getServiceByName(ctx.db, l.service)!;
    ctx.db.insert(serviceLinks).values({ appId, serviceId: service.id, alias: l.alias ?? null }).run();
  }
}

/** A changed key is named, never a value: nothing to redact today, kept as the one place that would. */
const redactKey = (key: string, _s: StackService, _secrets: string[]) => key;

/** The definition the service's live deploy runs; undefined when none succeeded yet (it is created again). */
function runningService(ctx: StackCtx, row: AppRow): StackService | undefined {
  const view = getApp(ctx.db, row.id);
  const live = view?.currentDeployId ? getDeploy(ctx.db, view.currentDeployId) : undefined;
  return live?.stackService ? parseServiceSpec(ctx.sealer.open(live.stackService))?.service : undefined;
}

// --- writes ---

/** Writes the service apps of a plan that passed and queues the stack deploy of its changed services. */
function applyPlan(ctx: StackCtx, stack: StackRow, plan: StackPlan, trigger: StackDeployTrigger, origin: Origin): StackDeployRow {
  const { db } = ctx;
  const load = ctx.loadCompose!({ text: stack.compose!, variables: resolveStackVars(db, ctx.sealer, stack.id).values });
  if (!load.ok) throw invalid('the Compose file changed while it was planned');
  const byName = new Map(load.stack.services.map((s) => [s.name, s]));
  const steps: StackDeployStep[] = [];
  for (const entry of plan.services) {
    if (entry.action === 'remove') {
      db.delete(apps).where(and(eq(apps.name, entry.app!), eq(apps.stackId, stack.id))).run();
      continue;
    }
    if (entry.action === 'unchanged') continue;
    const service = byName.get(entry.service)!;
    const spec: StackServiceSpec = { stack: stack.name, service };
    const fields = { ...serviceAppFields(service), jobs: canonicalJobs(jobsSchema.parse(stackJobs(service))), stackService: ctx.sealer.seal(canonicalJson(spec)) };
    const row = db.select().from(apps).where(eq(apps.name, entry.app!)).get();
    const appId = row
      ? db.update(apps).set({ ...fields, updatedAt: nowIso() }).where(eq(apps.id, row.id)).returning({ id: apps.id }).get().id
      : db.insert(apps).values({ ...APP_DEFAULTS, ...fields, name: entry.app!, owner: stack.owner, stackId: stack.id }).returning({ id: apps.id }).get().id;
    writeLinks(ctx, appId, service);
    if (entry.action === 'create' || entry.action === 'change') {
      const view = getApp(db, appId);
      // Dependencies come before their dependants in the plan, so the ones in this deploy are already in `steps`.
      const after = service.dependsOn.map((d) => d.service).filter((d) => steps.some((st) => st.service === d));
      steps.push({ service: entry.service, appId, action: entry.action, changes: entry.changes, stopFirst: entry.stop_first, deployId: null, previousDeployId: view?.currentDeployId ?? null, status: 'pending', after });
    }
  }
  return createStackDeploy(db, { stackId: stack.id, trigger, origin, steps, composeSealed: ctx.sealer.seal(stack.compose!), configVersion: stack.configVersion });
}

/** The values of a complete new variable list (a value left out keeps the stored one). */
function variablesOf(ctx: StackCtx, stackId: number, list: Variables): { values: Record<string, string>; secrets: string[] } {
  const stored = new Map(listStackVars(ctx.db, stackId).map((r) => [r.key, r]));
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  for (const v of list) {
    const current = stored.get(v.key);
    const value = v.value ?? (current ? stackVarValue(ctx.sealer, current) : '');
    values[v.key] = value;
    if ((v.is_secret ?? current?.isSecret) && value) secrets.push(value);
  }
  return { values, secrets };
}

/** Writes the complete variable list with history (secret values never kept in it); true when any changed. */
function writeVariables(ctx: StackCtx, stackId: number, list: Variables, changedBy: string | null, deleteOthers: boolean): boolean {
  const { db, sealer } = ctx;
  const keys = new Set(list.map((v) => v.key));
  if (keys.size !== list.length) throw invalid('a variable key is given twice', { key: 'variables' });
  const stored = new Map(listStackVars(db, stackId).map((r) => [r.key, r]));
  const now = nowIso();
  let changed = false;
  for (const v of list) {
    const current = stored.get(v.key);
    const value = v.value ?? (current ? stackVarValue(sealer, current) : '');
    const isSecret = v.is_secret ?? current?.isSecret ?? false;
    const required = v.required ?? current?.required ?? false;
    if (current && current.isSecret === isSecret && current.required === required && stackVarValue(sealer, current) === value) continue;
    const row = { stackId, key: v.key, value: isSecret ? null : value, secretSealed: isSecret && value ? sealer.seal(value) : null, isSecret, required, updatedAt: now };
    if (current) db.update(stackVars).set(row).where(eq(stackVars.id, current.id)).run();
    else db.insert(stackVars).values(row).run();
    db.insert(stackVarHistory).values({ stackId, key: v.key, action: current ? 'updated' : 'created', isSecret, required, value: isSecret ? null : value, changedAt: now, changedBy }).run();
    changed = true;
  }
  if (deleteOthers) {
    for (const [key, row] of stored) {
      if (keys.has(key)) continue;
      db.delete(stackVars).where(eq(stackVars.id, row.id)).run();
      db.insert(stackVarHistory).values({ stackId, key, action: 'deleted', isSecret: row.isSecret, required: row.required, value: null, changedAt: now, changedBy }).run();
      changed = true;
    }
  }
  return changed;
}

function assertOneSource(compose: string | null, repoUrl: string | null) {
  if (!compose && !repoUrl) throw invalid('give the Compose file as `compose`, or a repository as `repo_url`', { key: 'compose' });
  if (compose && repoUrl) throw invalid('give either `compose` or `repo_url`, not both', { key: 'compose' });
}

/** 400 naming the first problem's service and key; every problem in `details.problems`, the plan in `details.plan`. */
function refuseUnlessOk(plan: StackPlan) {
  if (plan.ok) return;
  const problems = [...plan.problems, ...plan.services.flatMap((s) => s.problems)];
  const first = problems[0];
  const where = first ? `${first.service ? `service ${first.service}: ` : ''}${first.key}: ${first.message}` : 'the Compose file cannot run';
  throw invalid(where, { problems, services: plan.services }, 'invalid_compose');
}


/** The apps a plan creates or changes (their jobs schedule may have changed with them). */
const planApps = (plan: StackPlan) => plan.services.filter((s) => (s.action === 'create' || s.action === 'change') && s.app).map((s) => s.app!);

function announce(ctx: StackCtx, stack: string, apps: string[]) {
  for (const a of apps) {
    ctx.enqueue(keyOf('app', a));
    ctx.enqueue(keyOf('jobs', a));
  }
  ctx.enqueue(keyOf('stack', stack));
  ctx.enqueue(keyOf('proxy', 'main'));
}

/** What a dry-run create shows for the stack (no row yet). */
function draftStack(name: string, source: { compose: string | null; repoUrl: string | null }, branch?: string, composePath?: string): StackRow {
  const now = nowIso();
  return { id: 0, name, compose: source.compose, repoUrl: source.repoUrl, branch: branch ?? 'main', composePath: composePath ?? 'docker-compose.yml', configVersion: 0, owner: 'rest', createdAt: now, updatedAt: now };
}

export type { Db };
