// Row queries of job runs and the scheduler's ticks (no rules: src/desired/jobs.ts and the jobs reconciler decide).
import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { jobRuns, jobTicks, type JobRunRow, type JobRunStatus } from './schema/index.js';

export type NewJobRun = typeof jobRuns.$inferInsert;

export const insertJobRun = (db: Db, row: NewJobRun): JobRunRow => db.insert(jobRuns).values(row).returning().get();

export function updateJobRun(db: Db, id: number, patch: Partial<JobRunRow>): void {
  db.update(jobRuns).set(patch).where(eq(jobRuns.id, id)).run();
}

export const getJobRun = (db: Db, id: number): JobRunRow | undefined => db.select().from(jobRuns).where(eq(jobRuns.id, id)).get();

/** Runs not finished yet (pending or running) of one app, oldest first. */
export const openRuns = (db: Db, appId: number): JobRunRow[] =>
  db.select().from(jobRuns).where(and(eq(jobRuns.appId, appId), inArray(jobRuns.status, ['pending', 'running']))).orderBy(jobRuns.id).all();

/** Newest first; `job` null: one-off commands. */
export function listRuns(db: Db, appId: number, job: string | null, limit = 50): JobRunRow[] {
  const which = job === null ? isNull(jobRuns.job) : eq(jobRuns.job, job);
  return db.select().from(jobRuns).where(and(eq(jobRuns.appId, appId), which)).orderBy(desc(jobRuns.id)).limit(limit).all();
}

/** Apps with a run not finished (their jobs key needs a pass at start even without a schedule). */
export const appsWithOpenRuns = (db: Db): number[] =>
  db.selectDistinct({ appId: jobRuns.appId }).from(jobRuns).where(inArray(jobRuns.status, ['pending', 'running'] as JobRunStatus[])).all().map((r) => r.appId);

/** History per job is bounded: the newest `keep` finished runs of each job (and of one-offs) stay. */
export function pruneRuns(db: Db, appId: number, keep = 100): void {
  db.run(sql`DELETE FROM job_runs WHERE app_id = ${appId} AND status NOT IN ('pending','running') AND id NOT IN (
    SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY job ORDER BY id DESC) AS n FROM job_runs WHERE app_id = ${appId}) WHERE n <= ${keep})`);
}

export function ticksOf(db: Db, appId: number): Map<string, string> {
  return new Map(db.select().from(jobTicks).where(eq(jobTicks.appId, appId)).all().map((t) => [t.job, t.lastTickAt]));
}

export function setTick(db: Db, appId: number, job: string, lastTickAt: string): void {
  db.insert(jobTicks).values({ appId, job, lastTickAt }).onConflictDoUpdate({ target: [jobTicks.appId, jobTicks.job], set: { lastTickAt } }).run();
}

/** A job renamed: its runs and its schedule's last tick carry the new name (a stale tick of that name goes). */
export function renameJobRecords(db: Db, appId: number, from: string, to: string): void {
  db.update(jobRuns).set({ job: to }).where(and(eq(jobRuns.appId, appId), eq(jobRuns.job, from))).run();
  db.delete(jobTicks).where(and(eq(jobTicks.appId, appId), eq(jobTicks.job, to))).run();
  db.update(jobTicks).set({ job: to }).where(and(eq(jobTicks.appId, appId), eq(jobTicks.job, from))).run();
}

/** Ticks of jobs no longer in the spec go (a job re-added later starts from its add, not an old tick). */
export function dropTicksExcept(db: Db, appId: number, jobs: string[]): void {
  for (const [job] of ticksOf(db, appId)) if (!jobs.includes(job)) db.delete(jobTicks).where(and(eq(jobTicks.appId, appId), eq(jobTicks.job, job))).run();
}

/** The newest runs of every job and one-off of an app (the app page's list). */
export const recentRuns = (db: Db, appId: number, limit = 20): JobRunRow[] =>
  db.select().from(jobRuns).where(eq(jobRuns.appId, appId)).orderBy(desc(jobRuns.id)).limit(limit).all();
