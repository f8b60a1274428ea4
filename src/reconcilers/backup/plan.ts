// Pure decisions of the backup reconciler: when the schedule is due, and which backup-dir files no record
// owns. Table-tested without a clock, a disk or a database.

export type SchedulePlan =
  | { action: 'off' }
  | { action: 'create'; nextInMs: number }
  /** Due, but another backup runs: look again shortly rather than skip the slot. */
  | { action: 'busy'; retryInMs: number }
  | { action: 'wait'; inMs: number };

export interface ScheduleInput {
  now: number;
  intervalMinutes: number;
  /** created_at of the newest scheduled record (whatever its outcome), or undefined for none yet. */
  lastScheduledAt: number | undefined;
  running: boolean;
}

export const BUSY_RETRY_MS = 30_000;

/**
 * The schedule counts from the last scheduled backup, persisted as its record: a restart neither fires an
 * extra backup nor skips one, and a failed run still moves the schedule on (SPEC.md 7: it keeps running).
 * The first slot after enabling is one interval after the daemon's first look (`lastScheduledAt` absent).
 */
export function planSchedule(i: ScheduleInput, firstSeenAt: number): SchedulePlan {
  if (i.intervalMinutes <= 0) return { action: 'off' };
  const interval = i.intervalMinutes * 60_000;
  const due = (i.lastScheduledAt ?? firstSeenAt) + interval;
  if (i.now < due) return { action: 'wait', inMs: due - i.now };
  if (i.running) return { action: 'busy', retryInMs: Math.min(BUSY_RETRY_MS, interval) };
  return { action: 'create', nextInMs: interval };
}

/**
 * Published archives of the backup dir that no record names (a deleted record, retention). Work files
 * (dot-names) are never touched here: an import or a build may be writing them; `recoverInterruptedBackups`
 * removes those at start, before anything can be writing.
 */
export function strayFiles(files: string[], recorded: Set<string>, isArchiveName: (f: string) => boolean): string[] {
  return files.filter((f) => isArchiveName(f) && !recorded.has(f));
}
