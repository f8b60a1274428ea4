// The job commands (issue 22): "run now" of a scheduled job and a one-off command. Both only record a
// `pending` run and wake the jobs reconciler, which starts its container (a request never touches the
// engine). The schedule itself is app spec (`jobs`, written by the apps command); its runs are the
// reconciler's.
import { z } from 'zod';
import { keyOf } from '../controller/types.js';
import { DomainError, notFound } from '../errors.js';
import { getApp } from '../store/apps.js';
import { insertJobRun, renameJobRecords } from '../store/jobs.js';
import { tx } from '../store/db.js';
import { updateApp } from './apps.js';
import type { JobRunRow } from '../store/schema/index.js';
import type { AppView } from '../store/app-view.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';
import { argvOf, commandSchema, DEFAULT_JOB_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, parseJobs } from './workload-fields.js';

/** `POST /api/apps/{id}/run`: the command, and how long it may run (default one hour). */
export const oneOffSchema = z
  .object({ command: commandSchema, timeout_seconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).default(DEFAULT_JOB_TIMEOUT_SECONDS) })
  .strict();

const isoMs = (d: Date) => d.toISOString();

/** A run needs the app's live release (its image and variables): 409 `no_live_deploy` before the first deploy. */
function runnableApp(ctx: CommandCtx, appId: number): AppView {
  const app = getApp(ctx.db, appId);
  if (!app) throw notFound('app');
  if (app.appType === 'external_service') throw new DomainError('conflict', 'no_live_deploy', 'an external_service has no image to run commands with');
  if (app.currentDeployId === null) throw new DomainError('conflict', 'no_live_deploy', `app ${app.name} has no live deploy yet: deploy it first, commands run in its live image`);
  return app;
}

/** Records a one-off command; the reconciler starts it. Answers the pending run. */
export function startOneOff(ctx: CommandCtx, appId: number, raw: unknown, origin: Origin): JobRunRow {
  const input = parseInput(oneOffSchema, raw);
  const app = runnableApp(ctx, appId);
  const run = insertJobRun(ctx.db, {
    appId, job: null, trigger: 'one_off', status: 'pending', command: argvOf(input.command), timeoutSeconds: input.timeout_seconds, createdAt: isoMs(ctx.now()),
  });
  ctx.enqueue(keyOf('jobs', app.name));
  ctx.log.info('one-off command requested', { app: app.name, run: run.id, origin });
  return run;
}

/** "Run now" of a scheduled job: a run outside its schedule, under the job's own concurrency rule. */
export function runJobNow(ctx: CommandCtx, appId: number, jobName: string, origin: Origin): JobRunRow {
  const app = runnableApp(ctx, appId);
  const job = parseJobs(app.jobs).find((j) => j.name === jobName);
  if (!job) throw notFound('job');
  const run = insertJobRun(ctx.db, {
    appId, job: job.name, trigger: 'manual', status: 'pending', command: argvOf(job.command), timeoutSeconds: job.timeout_seconds, createdAt: isoMs(ctx.now()),
  });
  ctx.enqueue(keyOf('jobs', app.name));
  ctx.log.info('job run requested', { app: app.name, job: job.name, run: run.id, origin });
  return run;
}

/**
 * The job editor's save of job `original` (null: a new job) as `job`, the others kept as they are. `PUT
 * /api/apps/{id} {jobs}` cannot tell a rename from a removal and an addition; the editor knows which job it
 * edits, so a new name moves the job's history (and its schedule's last tick) with it, in the same
 * transaction as the app's jobs.
 */
export function saveJob(ctx: CommandCtx, appId: number, original: string | null, job: unknown, origin: Origin): void {
  tx(ctx.db, () => {
    const app = getApp(ctx.db, appId);
    if (!app) throw notFound('app');
    const others = parseJobs(app.jobs).filter((j) => j.name !== original);
    const saved = updateApp(ctx, appId, { jobs: [...others, job] }, origin);
    // The stored list is sorted by name: the saved job is the one that is not among the others.
    const name = parseJobs(saved.jobs).find((j) => !others.some((o) => o.name === j.name))?.name;
    if (original !== null && name !== undefined && name !== original) {
      renameJobRecords(ctx.db, appId, original, name);
      ctx.log.info('job renamed', { app: app.name, from: original, to: name, origin });
    }
  });
}
