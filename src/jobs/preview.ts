// Pure: the next times a schedule fires, said for people ("Thu 26 Nov 02:00 UTC, in 3 h 10 min"). croner
// computes the times (the same parser the scheduler and the field rule use, in UTC); this only words them.
import { cronOf, scheduleProblem } from '../desired/workload-fields.js';

/** How many upcoming times the job editor and the job page show. */
export const PREVIEW_RUNS = 5;

export type SchedulePreview = { ok: true; runs: { at: string; text: string }[] } | { ok: false; problem: string };

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** "in 45 s", "in 12 min", "in 3 h 10 min", "in 2 d 4 h": the two largest units, rounded down. */
export function fromNow(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `in ${d} d${h > 0 ? ` ${h} h` : ''}`;
  if (h > 0) return `in ${h} h${m > 0 ? ` ${m} min` : ''}`;
  if (m > 0) return `in ${m} min`;
  return `in ${s} s`;
}

/** One time in words, in UTC (cron times are UTC): the weekday, the date (the year when not `now`'s), the time. */
export function wordTime(at: Date, nowMs: number): string {
  const year = at.getUTCFullYear() === new Date(nowMs).getUTCFullYear() ? '' : ` ${at.getUTCFullYear()}`;
  return `${DAYS[at.getUTCDay()]} ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}${year} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())} UTC, ${fromNow(at.getTime() - nowMs)}`;
}

/** The next `n` times `schedule` fires after `nowMs`, or why it is not a schedule (the field rule's sentence). */
export function previewSchedule(schedule: string, nowMs: number, n = PREVIEW_RUNS): SchedulePreview {
  const problem = scheduleProblem(schedule);
  if (problem) return { ok: false, problem };
  const times = cronOf(schedule).nextRuns(n, new Date(nowMs));
  return { ok: true, runs: times.map((t) => ({ at: t.toISOString(), text: wordTime(t, nowMs) })) };
}
