// The JSON shape of a job run (scheduled or one-off).
import type { JobRunRow } from '../store/schema/index.js';

/** A run as the API shows it; `output` only where one run is asked for. */
export function jobRunJson(r: JobRunRow, withOutput = false) {
  return {
    id: r.id, app_id: r.appId, job: r.job, trigger: r.trigger, status: r.status, command: r.command, timeout_seconds: r.timeoutSeconds,
    scheduled_for: r.scheduledFor, started_at: r.startedAt, finished_at: r.finishedAt, exit_code: r.exitCode, error: r.error, created_at: r.createdAt,
    ...(withOutput ? { output: r.output ?? '' } : {}),
  };
}
