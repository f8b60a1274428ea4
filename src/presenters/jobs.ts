// The JSON shape of a job run (scheduled or one-off).
import type { JobRunRow } from '../store/schema/index.js';
import { z } from 'zod';
import { JOB_RUN_STATUSES, JOB_RUN_TRIGGERS } from '../store/schema/index.js';

const text = z.string().nullable();
export const jobRunJsonSchema = z
  .object({
    id: z.number().int(), app_id: z.number().int(), job: text, trigger: z.enum(JOB_RUN_TRIGGERS), status: z.enum(JOB_RUN_STATUSES),
    command: z.array(z.string()), timeout_seconds: z.number().int(), scheduled_for: text, started_at: text, finished_at: text,
    exit_code: z.number().int().nullable(), error: text, created_at: z.string(),
  })
  .meta({ id: 'JobRun' });
/** One run with its output (GET .../runs/{id}). */
export const jobRunWithOutputJsonSchema = jobRunJsonSchema.extend({ output: z.string() }).meta({ id: 'JobRunWithOutput' });

/** A run as the API shows it; `output` only where one run is asked for. */
export function jobRunJson(r: JobRunRow, withOutput = false) {
  return {
    id: r.id, app_id: r.appId, job: r.job, trigger: r.trigger, status: r.status, command: r.command, timeout_seconds: r.timeoutSeconds,
    scheduled_for: r.scheduledFor, started_at: r.startedAt, finished_at: r.finishedAt, exit_code: r.exitCode, error: r.error, created_at: r.createdAt,
    ...(withOutput ? { output: r.output ?? '' } : {}),
  };
}
