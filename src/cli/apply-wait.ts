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

const STACK_FINAL = new Set(['success', 'rolled_back', 'cancelled']);

/** A stack deploy's end: its record polled (every `pollMs`, at most `limitMs`), as `svc backup` waits. */
async function stackOutcome(client: Client, r: PlannedResource & { stack_deploy_id: number }, out: (line: string) => void, pollMs: number, limitMs: number): Promise<boolean> {
  const started = Date.now();
  for (;;) {
    const d = await client.json<{ status: string; error: string | null }>('GET', `/api/stacks/${r.stack_id}/deploys/${r.stack_deploy_id}`);
    if (STACK_FINAL.has(d.status)) {
      if (d.status === 'success') out(`Stack/${r.name}: stack deploy ${r.stack_deploy_id} succeeded`);
      else out(`Stack/${r.name}: stack deploy ${r.stack_deploy_id} ended ${d.status}${d.error ? `: ${d.error}` : ''} (svc stacks show ${r.name})`);
      return d.status === 'rolled_back';
    }
    if (Date.now() - started > limitMs) {
      out(`Stack/${r.name}: stack deploy ${r.stack_deploy_id} still ${d.status}; not waiting longer (svc stacks show ${r.name})`);
      return true;
    }
    await new Promise((done) => setTimeout(done, pollMs));
  }
}

/** One line per deploy as it ends; resolves with how many failed. */
export async function waitForDeploys(client: Client, resources: PlannedResource[], out: (line: string) => void, o: { pollMs?: number; limitMs?: number } = {}): Promise<number> {
  const queued = resources.filter((r): r is PlannedResource & { deploy_id: number } => typeof r.deploy_id === 'number');
  const stacks = resources.filter((r): r is PlannedResource & { stack_deploy_id: number } => typeof r.stack_deploy_id === 'number');
  const count = queued.length + stacks.length;
  if (count === 0) return 0;
  out(`waiting for ${count === 1 ? 'the deploy' : `${count} deploys`} (--no-wait to skip)`);
  const stackFailures = stacks.map((r) => stackOutcome(client, r, out, o.pollMs ?? 500, o.limitMs ?? 30 * 60_000));
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
  return outcomes.filter(Boolean).length + (await Promise.all(stackFailures)).filter(Boolean).length;
}
