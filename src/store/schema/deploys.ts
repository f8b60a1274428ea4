import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt } from './common.js';
import { apps } from './apps.js';

export const DEPLOY_STATUSES = ['pending', 'running', 'success', 'failed', 'auto_rollback', 'cancelled'] as const;
export type DeployStatus = (typeof DEPLOY_STATUSES)[number];
/** `roll`: svc deployed the live image again because a spec change needs new containers (volumes, issue 22). */
export const DEPLOY_TRIGGERS = ['webhook', 'manual', 'rollback', 'roll'] as const;
export type DeployTrigger = (typeof DEPLOY_TRIGGERS)[number];
/** Where a change of desired state came from (src/desired/context.ts); deploys record it in `origin`. */
export const ORIGINS = ['api', 'ui', 'cli', 'manifest', 'webhook', 'schedule'] as const;
export type Origin = (typeof ORIGINS)[number];

/**
 * A deploy is a persisted state machine: `status` plus `step` (the pipeline step it is at), so a daemon
 * killed mid-deploy resumes or cleans up from here. The env snapshot is sealed (it holds secrets).
 */
export const deploys = sqliteTable(
  'deploys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    imageRef: text('image_ref'),
    /**
     * What names exactly the image this deploy's containers run (one engine: the image id `sha256:...`),
     * recorded when its first container is made; null before that, or when the runtime cannot tell. A
     * rollback carries its target's, so a tag moved since (`web:latest` pulled again) does not change it.
     */
    imagePin: text('image_pin'),
    commitSha: text('commit_sha'),
    trigger: text('trigger', { enum: DEPLOY_TRIGGERS }).notNull(),
    /** The entry point that asked for it (API.md "Deploys"); rows older than the column say `api`. */
    origin: text('origin', { enum: ORIGINS }).notNull().default('api'),
    status: text('status', { enum: ['pending', 'running', 'success', 'failed', 'auto_rollback', 'cancelled'] })
      .notNull()
      .default('pending'),
    step: text('step'),
    error: text('error'),
    envSnapshotSealed: text('env_snapshot_sealed'),
    envDiff: text('env_diff', { mode: 'json' }).$type<{ added: string[]; removed: string[]; changed: string[] }>(),
    configVersion: integer('config_version'),
    stagingContainer: text('staging_container'),
    previousContainer: text('previous_container'),
    /** Deadline of the current wait (health check, drain), ISO. */
    deadline: text('deadline'),
    /** End of the post-switch watch window while it is open (API.md "Watch after the switch"), else null. */
    watchUntil: text('watch_until'),
    /** `svc_build`: the port the build provider chose; becomes the app's `internal_port` on success. */
    buildPort: integer('build_port'),
    /**
     * How many daemon processes began `attempt_step` of this deploy; a step that ends the process each
     * time is given up after a few (src/reconcilers/app/attempts.ts) instead of crash-looping the daemon.
     */
    attemptStep: text('attempt_step'),
    stepAttempts: integer('step_attempts').notNull().default(0),
    /** `stop_first`: when the old containers were stopped (ISO with ms); the switch measures the downtime from it. */
    oldStoppedAt: text('old_stopped_at'),
    /** A stack service's definition as this deploy runs it (the app's `stack_service` when it was created). */
    stackService: text('stack_service'),
    /**
     * The drain of the old version this deploy replaced (issue 37): from the switch (`drain_from`) until its
     * connections end or `drain_until` passes, then it is stopped; null once stopped. `drain_open`: the
     * connections open on it at the switch (the `stop_old` event reports them).
     */
    drainFrom: text('drain_from'),
    drainUntil: text('drain_until'),
    drainOpen: integer('drain_open'),
    startedAt: text('started_at'),
    completedAt: text('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('deploys_app_idx').on(t.appId, t.id)],
);

export type DeployRow = typeof deploys.$inferSelect;
