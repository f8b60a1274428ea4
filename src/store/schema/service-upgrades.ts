import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';
import { services } from './services.js';

export const UPGRADE_STATUSES = ['running', 'switched', 'failed', 'reverted', 'confirmed'] as const;
export type UpgradeStatus = (typeof UPGRADE_STATUSES)[number];
/** The steps of a guarded major upgrade, in order (src/reconcilers/service/upgrade-plan.ts). */
export const UPGRADE_STEPS = ['backup', 'create', 'wait_ready', 'freeze', 'move', 'verify', 'switch', 'drain', 'kept', 'revert', 'revert_drain', 'confirm', 'rollback', 'done'] as const;
export type UpgradeStep = (typeof UPGRADE_STEPS)[number];

/**
 * A guarded major upgrade of a managed service (issue 33), a persisted state machine like a deploy: asked
 * for by the services command (from/to, the new container and directory beside the old), advanced one step
 * per pass by the service reconciler, so a daemon that dies at any step resumes it or rolls it back.
 * `request` is what the user asked of a switched upgrade: revert to the old one, or confirm (drop it).
 */
export const serviceUpgrades = sqliteTable(
  'service_upgrades',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    serviceId: integer('service_id')
      .notNull()
      .references(() => services.id, { onDelete: 'cascade' }),
    fromVersion: text('from_version').notNull(),
    toVersion: text('to_version').notNull(),
    fromImage: text('from_image').notNull(),
    toImage: text('to_image').notNull(),
    fromContainer: text('from_container').notNull(),
    toContainer: text('to_container').notNull(),
    fromDataDir: text('from_data_dir').notNull(),
    toDataDir: text('to_data_dir').notNull(),
    status: text('status').$type<UpgradeStatus>().notNull().default('running'),
    step: text('step').$type<UpgradeStep>().notNull().default('backup'),
    /** Passes that began the current step; three without it finishing fail the upgrade (a step that crashes). */
    attempts: integer('attempts').notNull().default(0),
    request: text('request').$type<'revert' | 'confirm'>(),
    /** The pre-upgrade dump of the service (gzip), under <SVC_DATA_DIR>/service-backups/<name>/. */
    backupPath: text('backup_path'),
    /** Per table (SQL) or per database (Redis) counts and checksums of both sides, JSON. */
    verification: text('verification'),
    error: text('error'),
    keepDays: integer('keep_days').notNull().default(7),
    switchedAt: text('switched_at'),
    finishedAt: text('finished_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('service_upgrades_service_idx').on(t.serviceId)],
);

/** What happened to a service, one row per step of an upgrade (and other service operations later). */
export const serviceEvents = sqliteTable(
  'service_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    serviceId: integer('service_id')
      .notNull()
      .references(() => services.id, { onDelete: 'cascade' }),
    upgradeId: integer('upgrade_id'),
    kind: text('kind').notNull(),
    message: text('message').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('service_events_service_idx').on(t.serviceId)],
);

export type ServiceUpgradeRow = typeof serviceUpgrades.$inferSelect;
export type ServiceEventRow = typeof serviceEvents.$inferSelect;
