// `svc previews APP [settings flags]`: the app's pull-request previews (issue 20), and its `previews`
// settings changed from flags (a PUT of the whole merged object: the API validates it as any update).
import { appByName, CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

/** What `svc previews` reads of each preview (GET /api/apps/{id}/previews). */
export interface PreviewListRow {
  pr_number: number;
  app: string;
  status?: string;
  head_sha: string;
  head_ref: string;
  fork: boolean;
  last_commit_at: string;
  access_url: string | null;
}

export interface PreviewFlags {
  on?: boolean;
  off?: boolean;
  max?: string;
  'ttl-days'?: string;
  services?: string;
  forks?: boolean;
  'no-forks'?: boolean;
  memory?: string;
  cpus?: string;
  env?: string[];
  'unset-env'?: string[];
}

const age = (at: string, now: Date) => {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(at)) / 1000));
  return s < 90 ? `${s}s` : s < 5400 ? `${Math.round(s / 60)}m` : s < 129_600 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
};

/** Pure: the `svc previews` table. */
export function previewsTable(rows: PreviewListRow[], now: Date): string {
  return formatTable([
    ['PR', 'APP', 'STATUS', 'COMMIT', 'BRANCH', 'AGE', 'URL'],
    ...rows.map((p) => [`#${p.pr_number}${p.fork ? ' (fork)' : ''}`, p.app, p.status ?? '-', p.head_sha.slice(0, 12), p.head_ref, age(p.last_commit_at, now), p.access_url ?? '-']),
  ]);
}

const number = (flag: string, raw: string) => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw)) throw new CliError(`--${flag} must be a number`, 2);
  return Number(raw);
};

/** Pure: the settings after the flags (null: no flag given, nothing to change). */
export function mergeSettings(current: Record<string, any> | null, f: PreviewFlags): Record<string, unknown> | null {
  const touched = Object.values(f).some((v) => v !== undefined && !(Array.isArray(v) && v.length === 0));
  if (!touched) return null;
  if (f.on && f.off) throw new CliError('--on and --off exclude each other', 2);
  if (f.forks && f['no-forks']) throw new CliError('--forks and --no-forks exclude each other', 2);
  const next: Record<string, any> = { ...(current ?? {}) };
  if (f.on) next.enabled = true;
  if (f.off) next.enabled = false;
  if (f.max !== undefined) next.max = number('max', f.max);
  if (f['ttl-days'] !== undefined) next.ttl_days = number('ttl-days', f['ttl-days']);
  if (f.services !== undefined) next.services = f.services;
  if (f.forks) next.forks = true;
  if (f['no-forks']) next.forks = false;
  if (f.memory !== undefined || f.cpus !== undefined) {
    next.resources = { ...(next.resources ?? {}) };
    if (f.memory !== undefined) next.resources.memory_mb = number('memory', f.memory);
    if (f.cpus !== undefined) next.resources.cpus = number('cpus', f.cpus);
  }
  if (f.env?.length || f['unset-env']?.length) {
    next.env = { ...(next.env ?? {}) };
    for (const pair of f.env ?? []) {
      const i = pair.indexOf('=');
      if (i <= 0) throw new CliError(`--env ${pair}: expected KEY=VALUE`, 2);
      next.env[pair.slice(0, i)] = pair.slice(i + 1);
    }
    for (const key of f['unset-env'] ?? []) delete next.env[key];
  }
  return next;
}

function describe(s: Record<string, any> | null): string {
  if (!s?.enabled) return 'previews: off\n';
  const env = Object.keys(s.env ?? {});
  return `previews: on · max ${s.max} · ttl ${s.ttl_days} days · services ${s.services} · forks ${s.forks ? 'yes (no secrets)' : 'no'} · ` +
    `${s.resources?.memory_mb} MiB, ${s.resources?.cpus} CPU each${env.length ? ` · env ${env.join(', ')}` : ''}\n`;
}

export async function previewsCommand(client: Client, o: { app: string; flags: PreviewFlags; json?: boolean; now?: Date; write?: (text: string) => void }): Promise<number> {
  const write = o.write ?? ((t: string) => void process.stdout.write(t));
  const app = await appByName(client, o.app);
  let settings = (app.previews ?? null) as Record<string, any> | null;
  const next = mergeSettings(settings, o.flags);
  if (next) {
    const updated = await client.json<{ previews: Record<string, any> | null }>('PUT', `/api/apps/${app.id}`, { previews: next });
    settings = updated.previews;
  }
  const rows = await client.json<PreviewListRow[]>('GET', `/api/apps/${app.id}/previews`);
  if (o.json) return printJson(rows, write), 0;
  write(describe(settings));
  write(rows.length === 0 ? 'no previews\n' : previewsTable(rows, o.now ?? new Date()));
  return 0;
}
