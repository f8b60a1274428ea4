import { sqliteTable, integer, text, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { apps } from './apps.js';

export const JOB_RUN_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'timed_out', 'skipped', 'cancelled'] as const;
export type JobRunStatus = (typeof JOB_RUN_STATUSES)[number];
/** `schedule`: its cron time came; `missed`: it came while the daemon was down; `manual`: "run now"; `one_off`: POST .../run. */
export const JOB_RUN_TRIGGERS = ['schedule', 'missed', 'manual', 'one_off'] as const;
export type JobRunTrigger = (typeof JOB_RUN_TRIGGERS)[number];

/**
 * One run of an app's job, or a one-off command (`job` null). A command writes it `pending` (run now,
 * one-off); the jobs reconciler starts it, observes its container and writes the outcome: exit code and
 * the last 64 KiB of its output. Gone with its app (cascade).
 */
export const jobRuns = sqliteTable(
  'job_runs',
  {
    id: integer('id').primaryKey(),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    /** The job's name; null for a one-off command. */
    job: text('job'),
    trigger: text('trigger', { enum: JOB_RUN_TRIGGERS }).notNull(),
    status: text('status', { enum: JOB_RUN_STATUSES }).notNull().default('pending'),
    /** The argument array that runs (a string command is stored as `["sh","-c",cmd]`), JSON. */
    command: text('command', { mode: 'json' }).$type<string[]>().notNull(),
    timeoutSeconds: integer('timeout_seconds').notNull(),
    /** The cron time this run is for (schedule and missed runs). */
    scheduledFor: text('scheduled_for'),
    containerName: text('container_name'),
    image: text('image'),
    startedAt: text('started_at'),
    finishedAt: text('finished_at'),
    exitCode: integer('exit_code'),
    /** The last 64 KiB of stdout and stderr, interleaved as the engine logged them. */
    output: text('output'),
    /** Why it did not run or how it ended (skipped for concurrency, no image, timed out). */
    error: text('error'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('job_runs_app_idx').on(t.appId, t.job, t.id), index('job_runs_status_idx').on(t.status)],
);
export type JobRunRow = typeof jobRuns.$inferSelect;

/**
 * The last cron time the scheduler has handled per job: the next due time is computed from it, so a time
 * that passed while the daemon was down is found at the next start (and run once).
 */
export const jobTicks = sqliteTable(
  'job_ticks',
  {
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    job: text('job').notNull(),
    lastTickAt: text('last_tick_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.job] })],
);
