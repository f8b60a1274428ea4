// Where a failed job run is reported (issue 22): an app event today. THE place to add a notification
// (the notify work): every failed, timed-out or vanished run of a scheduled job passes through here once.
import type { Db } from '../store/db.js';
import { addAppEvent } from '../store/deploys.js';
import type { JobRunRow } from '../store/schema/index.js';

export function reportFailedJobRun(db: Db, app: { id: number; name: string }, run: JobRunRow, why: string): void {
  addAppEvent(db, app.id, 'job', `job ${run.job ?? '(one-off)'} run ${run.id} of ${app.name} ${why}`, 'error');
}
