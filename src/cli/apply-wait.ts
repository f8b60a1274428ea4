// `svc apply` waits for the deploys its apply queued and says how each ended, so an applied app that then
// fails is not a silent "+ App/web create". Each deploy's events stream ends when the deploy does (its
// `done` event carries the status); the deploy record then gives the error sentence.
import type { PlannedResource } from '../manifests/plan.js';
import { CliError, type Client } from './client.js';
import { readSse } from './sse.js';

const FAILED = new Set(['failed', 'auto_rollback']);

/** The final status of deploy `id`: follows its events stream until `done`. */
async function finalStatus(client: Client, id: number): Promise<string> {
  const res = await client.raw(`/api/deploys/${id}/events/stream`, { headers: { accept: 'text/event-stream' } });
  if (!res.body) throw new CliError(`the events stream of deploy ${id} ended before the deploy did`);
  for await (const ev of readSse(res.body)) {
    if (ev.event === 'done') return (JSON.parse(ev.data) as { status: string }).status;
  }
  throw new CliError(`the events stream of deploy ${id} ended before the deploy did`);
}

/** One line per deploy as it ends; resolves with how many failed. */
export async function waitForDeploys(client: Client, resources: PlannedResource[], out: (line: string) => void): Promise<number> {
  const queued = resources.filter((r): r is PlannedResource & { deploy_id: number } => typeof r.deploy_id === 'number');
  if (queued.length === 0) return 0;
  out(`waiting for ${queued.length === 1 ? 'the deploy' : `${queued.length} deploys`} (--no-wait to skip)`);
  const outcomes = await Promise.all(
    queued.map(async (r) => {
      const status = await finalStatus(client, r.deploy_id);
      const d = await client.json<{ image_ref: string | null; error: string | null }>('GET', `/api/deploys/${r.deploy_id}`);
      const what = `App/${r.name}: deploy ${r.deploy_id} of ${d.image_ref ?? r.deploy ?? 'its image'}`;
      if (status === 'success') out(`${what} succeeded`);
      else if (FAILED.has(status)) out(`${what} ${status === 'auto_rollback' ? 'failed its health check (auto_rollback)' : 'failed'}: ${d.error ?? 'no reason recorded'} (svc logs ${r.name}; events: GET /api/deploys/${r.deploy_id}/events)`);
      else out(`${what} ended ${status}`);
      return FAILED.has(status);
    }),
  );
  return outcomes.filter(Boolean).length;
}
