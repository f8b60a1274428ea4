// Where a scheduled job's outcome is reported (issue 22): a failed, timed-out or unstartable run is an app
// event and a `job_failed` notification; the next success of that job after a sent alert is a
// `job_recovered`. The storm rule (notify/storm.ts, key `app:<id>:job:<name>`) keeps a job failing every
// minute to one message per 15 minutes. One-off commands are the caller's to watch: never notified.
import { addAppEvent } from '../store/deploys.js';
import type { JobRunRow } from '../store/schema/index.js';
import { raise, type NoticeTarget } from '../notify/raise.js';

const stormKey = (appId: number, job: string) => `app:${appId}:job:${job}`;

export function reportFailedJobRun(to: NoticeTarget, app: { id: number; name: string }, run: JobRunRow, why: string, nowMs = Date.now()): void {
  addAppEvent(to.db, app.id, 'job', `job ${run.job ?? '(one-off)'} run ${run.id} of ${app.name} ${why}`, 'error');
  if (!run.job) return;
  raise(to, {
    event: 'job_failed',
    subject: `${app.name}: job ${run.job} failed`,
    message: `Run ${run.id} of job ${run.job} ${why}. Its output is kept with the run (GET /api/apps/${app.id}/runs/${run.id}).`,
    link: `/apps/${app.id}`,
    storm: { key: stormKey(app.id, run.job), signal: 'fire' },
  }, nowMs);
}

/** A succeeded run of a scheduled job: closes an open `job_failed` alert (sends `job_recovered` once). */
export function reportSucceededJobRun(to: NoticeTarget, app: { id: number; name: string }, run: JobRunRow, nowMs = Date.now()): void {
  if (!run.job) return;
  raise(to, {
    event: 'job_recovered',
    subject: `${app.name}: job ${run.job} succeeded again`,
    message: `Run ${run.id} of job ${run.job} succeeded.`,
    link: `/apps/${app.id}`,
    storm: { key: stormKey(app.id, run.job), signal: 'resolve' },
  }, nowMs);
}
