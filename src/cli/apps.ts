// `svc apps`, `svc deploy` and `svc logs`: thin calls of the apps, deploys and logs endpoints. A followed
// deploy prints its events from the SSE stream and its exit status is the deploy's end (0 only on success).
import { appByName, CliError, type Client } from './client.js';
import { readSse } from './sse.js';
import { statusLine, type StatusFacts } from '../presenters/status-line.js';
import { printJson } from './output.js';

export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}

/** What `svc apps` reads of each app (GET /api/apps). */
export type AppListRow = StatusFacts & { name: string; image_ref: string | null; access_url: string | null; config_changed: boolean; replicas: number };

/** Pure: the `svc apps` table; the last column says whether the app serves and why an `error` is one. */
export function appsTable(apps: AppListRow[]): string {
  const rows = [
    ['NAME', 'STATUS', 'REPLICAS', 'IMAGE', 'URL', 'DETAIL'],
    ...apps.map((a) => [a.name, a.status + (a.config_changed ? '*' : ''), String(a.replicas), a.image_ref ?? '-', a.access_url ?? '-', statusLine(a)]),
  ];
  return formatTable(rows) + (apps.some((a) => a.config_changed) ? '* env or links changed since the live deploy\n' : '');
}

/** `svc apps`: the table; `--json` the API's answer; `--names` one name a line (what completion scripts read). */
export async function appsCommand(client: Client, o: { json?: boolean; names?: boolean } = {}): Promise<number> {
  const apps = await client.json<AppListRow[]>('GET', '/api/apps');
  if (o.json) return printJson(apps), 0;
  if (o.names) return process.stdout.write(apps.map((a) => `${a.name}\n`).join('')), 0;
  process.stdout.write(apps.length === 0 ? 'no apps\n' : appsTable(apps));
  return 0;
}

const FINAL_OK = 'success';

export async function deployCommand(client: Client, o: { app: string; image?: string; follow: boolean }): Promise<number> {
  const app = await appByName(client, o.app);
  const deploy = await client.json<{ id: number; image_ref: string; status: string }>('POST', `/api/apps/${app.id}/deploys`, o.image ? { image_ref: o.image } : {});
  process.stdout.write(`deploy ${deploy.id} of ${deploy.image_ref} queued\n`);
  if (!o.follow) return 0;
  const res = await client.raw(`/api/deploys/${deploy.id}/events/stream`, { headers: { accept: 'text/event-stream' } });
  if (!res.body) throw new CliError('the events stream ended before the deploy did');
  for await (const ev of readSse(res.body)) {
    if (ev.event === 'deploy_event') {
      const e = JSON.parse(ev.data) as { timestamp: string; level: string; step: string; message: string };
      process.stdout.write(`${e.timestamp} ${e.level.padEnd(5)} ${e.step.padEnd(12)} ${e.message}\n`);
    } else if (ev.event === 'done') {
      const { status } = JSON.parse(ev.data) as { status: string };
      process.stdout.write(`deploy ${deploy.id}: ${status}\n`);
      return status === FINAL_OK ? 0 : 1;
    }
  }
  throw new CliError(`the events stream of deploy ${deploy.id} ended before the deploy did`);
}

/** Without --follow: print what the stream sends until it has been quiet this long, then stop. */
const QUIET_MS = 1000;

export async function logsCommand(client: Client, o: { app: string; tail: number; follow: boolean }): Promise<number> {
  const app = await appByName(client, o.app);
  const abort = new AbortController();
  const res = await client.raw(`/api/apps/${app.id}/logs/stream?tail=${o.tail}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  if (!res.body) return 0;
  let quiet: NodeJS.Timeout | undefined;
  const arm = () => {
    if (o.follow) return;
    if (quiet) clearTimeout(quiet);
    quiet = setTimeout(() => abort.abort(), QUIET_MS);
  };
  arm();
  try {
    for await (const ev of readSse(res.body)) {
      if (ev.event === 'stdout') process.stdout.write(ev.data + '\n');
      else if (ev.event === 'stderr') process.stderr.write(ev.data + '\n');
      else if (ev.event === 'status' && ev.data === 'switched') process.stderr.write('-- switched to the new live container --\n');
      arm();
    }
  } catch (err) {
    if (!abort.signal.aborted) throw new CliError(`the log stream broke: ${(err as Error).message}`);
  } finally {
    if (quiet) clearTimeout(quiet);
  }
  return 0;
}
