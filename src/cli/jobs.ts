// `svc jobs APP [--run JOB]` and `svc volumes APP`: what an app schedules and mounts (issue 22). Jobs and
// volumes are set through the app's fields (`svc apply`, PUT /api/apps/{id}); these read them, and
// `--run JOB` asks for a run now.
import { appByName, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

interface RunJson { id: number; status: string; exit_code: number | null; started_at: string | null; trigger: string }
interface JobJson { name: string; schedule: string; command: string | string[]; concurrency: string; timeout_seconds: number; last_run: RunJson | null }

export async function jobsCommand(client: Client, o: { app: string; run?: string; json?: boolean }): Promise<number> {
  const app = await appByName(client, o.app);
  if (o.run) {
    const run = await client.json<RunJson>('POST', `/api/apps/${app.id}/jobs/${encodeURIComponent(o.run)}/runs`);
    process.stdout.write(`run ${run.id} of job ${o.run} requested (${run.status})\n`);
    return 0;
  }
  const jobs = await client.json<JobJson[]>('GET', `/api/apps/${app.id}/jobs`);
  if (o.json) return printJson(jobs), 0;
  if (jobs.length === 0) {
    process.stdout.write(`no jobs (set the app's jobs field); one-off commands: svc run ${o.app} -- COMMAND\n`);
    return 0;
  }
  const last = (r: RunJson | null) => (r ? `#${r.id} ${r.status}${r.exit_code === null ? '' : ` (exit ${r.exit_code})`} ${r.started_at ?? ''}`.trim() : '-');
  const cmd = (c: string | string[]) => (typeof c === 'string' ? c : JSON.stringify(c));
  process.stdout.write(formatTable([['JOB', 'SCHEDULE (UTC)', 'OVERLAP', 'LAST RUN', 'COMMAND'], ...jobs.map((j) => [j.name, j.schedule, j.concurrency, last(j.last_run), cmd(j.command)])]));
  return 0;
}

/**
 * `svc volumes APP`: the app's volumes, deploy strategy and drain (drain_seconds), read from the app's record (the by-name lookup
 * answers only `{id, name}`, so the fields come from `GET /api/apps/{id}`). `--json`: those two fields as
 * the API answers them.
 */
export async function volumesCommand(client: Client, o: { app: string; json?: boolean }, write: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const { id } = await appByName(client, o.app);
  const app = await client.json<{ volumes?: { name: string; mount_path: string }[]; deploy_strategy?: string; drain_seconds?: number }>('GET', `/api/apps/${id}`);
  if (o.json) return printJson({ volumes: app.volumes ?? [], deploy_strategy: app.deploy_strategy ?? 'blue_green', drain_seconds: app.drain_seconds ?? 30 }), 0;
  const volumes = app.volumes ?? [];
  if (volumes.length === 0) write('no volumes\n');
  else write(formatTable([['VOLUME', 'MOUNT PATH'], ...volumes.map((v) => [v.name, v.mount_path])]));
  write(`deploy strategy: ${app.deploy_strategy ?? 'blue_green'}\n`);
  write(`drain: ${app.drain_seconds ?? 30} s\n`);
  return 0;
}
