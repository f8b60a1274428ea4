// Pure decisions of the jobs reconciler (issue 22): which scheduled times came, which runs start, are
// skipped, replaced, finished or timed out, and when to look again. The reconciler observes and acts.
import { cronOf, type Job } from '../desired/workload-fields.js';
import type { JobRunTrigger } from '../store/schema/index.js';

/** A due time more than this late is a run the daemon missed (it was down), not one it is on time for. */
export const MISSED_AFTER_MS = 60_000;

export interface OpenRun {
  id: number;
  /** null: a one-off command. */
  job: string | null;
  status: 'pending' | 'running';
  startedAtMs: number | null;
  timeoutSeconds: number;
  /** The engine's view of its container (running only): missing when it is gone. */
  container?: 'running' | 'exited' | 'missing';
}

export type JobAction =
  /** Record the cron time handled, so a restart does not run it again. */
  | { kind: 'tick'; job: string; at: string }
  /** A new run of `job` from its schedule (recorded, then started). */
  | { kind: 'create'; job: string; trigger: JobRunTrigger; scheduledFor: string }
  /** Recorded as skipped: `forbid` and a run of the job is still open. */
  | { kind: 'skip'; job: string; trigger: JobRunTrigger; scheduledFor: string | null; runId?: number; reason: string }
  | { kind: 'start'; runId: number }
  /** `replace`: the open run stops, recorded as cancelled. */
  | { kind: 'cancel'; runId: number; reason: string }
  | { kind: 'finish'; runId: number }
  | { kind: 'timeout'; runId: number };

export interface JobPlan {
  actions: JobAction[];
  /** When the next cron time or timeout is due (undefined: nothing scheduled). */
  wakeAfterMs?: number;
}

/**
 * Decides one pass. `ticks`: the last cron time handled per job (none: the job is new, its schedule
 * starts now and no past time runs). Several times passed while down run once (the newest).
 */
export function planJobs(jobs: Job[], ticks: Map<string, string>, open: OpenRun[], nowMs: number): JobPlan {
  const actions: JobAction[] = [];
  let wake = Infinity;
  const soon = (ms: number) => (wake = Math.min(wake, Math.max(0, ms)));
  const iso = (ms: number) => new Date(ms).toISOString();

  // Running runs first: their end frees a `forbid` job for a run in this same pass.
  const stillOpen = new Map<string, OpenRun[]>();
  const keep = (r: OpenRun) => r.job !== null && stillOpen.set(r.job, [...(stillOpen.get(r.job) ?? []), r]);
  for (const r of open.filter((r) => r.status === 'running')) {
    if (r.container === 'exited' || r.container === 'missing') {
      actions.push({ kind: 'finish', runId: r.id });
      continue;
    }
    const deadline = (r.startedAtMs ?? nowMs) + r.timeoutSeconds * 1000;
    if (deadline <= nowMs) {
      actions.push({ kind: 'timeout', runId: r.id });
      continue;
    }
    soon(deadline - nowMs);
    keep(r);
  }

  /** A run of `job` may start now, under its concurrency rule; cancels what `replace` replaces. */
  const admit = (job: Job, label: string): { ok: true } | { ok: false; reason: string } => {
    const running = stillOpen.get(job.name) ?? [];
    if (running.length === 0 || job.concurrency === 'allow') return { ok: true };
    if (job.concurrency === 'forbid') return { ok: false, reason: `skipped: run ${running.map((r) => r.id).join(', ')} of job ${job.name} is still running (concurrency forbid)` };
    for (const r of running) actions.push({ kind: 'cancel', runId: r.id, reason: `replaced by ${label} (concurrency replace)` });
    stillOpen.set(job.name, []);
    return { ok: true };
  };

  const byName = new Map(jobs.map((j) => [j.name, j]));
  for (const r of open.filter((r) => r.status === 'pending')) {
    const job = r.job === null ? undefined : byName.get(r.job);
    if (r.job !== null && !job) {
      actions.push({ kind: 'skip', job: r.job, trigger: 'manual', scheduledFor: null, runId: r.id, reason: `job ${r.job} is no longer in the app's spec` });
      continue;
    }
    if (job) {
      const ok = admit(job, `run ${r.id}`);
      if (!ok.ok) {
        actions.push({ kind: 'skip', job: job.name, trigger: 'manual', scheduledFor: null, runId: r.id, reason: ok.reason });
        continue;
      }
      keep({ ...r, status: 'running' });
    }
    actions.push({ kind: 'start', runId: r.id });
  }

  for (const job of jobs) {
    const cron = cronOf(job.schedule);
    const last = ticks.get(job.name);
    if (last === undefined) {
      actions.push({ kind: 'tick', job: job.name, at: iso(nowMs) });
      const next = cron.nextRun(new Date(nowMs));
      if (next) soon(next.getTime() - nowMs);
      continue;
    }
    const due = cron.nextRun(new Date(last));
    if (due && due.getTime() <= nowMs) {
      // The newest time that came: the ones before it collapse into this one run.
      const newest = cron.previousRuns(1, new Date(nowMs + 1))[0] ?? due;
      const scheduledFor = iso(newest.getTime());
      const trigger: JobRunTrigger = nowMs - newest.getTime() > MISSED_AFTER_MS ? 'missed' : 'schedule';
      actions.push({ kind: 'tick', job: job.name, at: scheduledFor });
      const ok = admit(job, `the run for ${scheduledFor}`);
      if (ok.ok) {
        actions.push({ kind: 'create', job: job.name, trigger, scheduledFor });
        keep({ id: -1, job: job.name, status: 'running', startedAtMs: nowMs, timeoutSeconds: job.timeout_seconds });
      } else actions.push({ kind: 'skip', job: job.name, trigger, scheduledFor, reason: ok.reason });
      const next = cron.nextRun(new Date(newest.getTime()));
      if (next) soon(next.getTime() - nowMs);
    } else if (due) soon(due.getTime() - nowMs);
  }
  return wake === Infinity ? { actions } : { actions, wakeAfterMs: wake };
}
