// Per-service backups and restores (issue 33 section 3, decision 0052). A service backup is one service's
// logical dump (postgres: pg_dumpall, mysql: mysqldump of its databases, redis: its RDB), gzip-compressed
// under <SVC_DATA_DIR>/service-backups/<service>/, copied to the backup targets like a full backup
// (`service_backup_uploads`). A service restore loads one into the same service (after a safety backup) or
// into a new service (a copy). The rows name their service by id and name without a foreign key: a
// service's backups outlive the service, so a deleted database can still be restored into a new one.
import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';
import { backupTargets } from './offsite.js';
import { services } from './services.js';
import type { UploadStatus } from './offsite.js';

export const SERVICE_BACKUP_TRIGGERS = ['manual', 'scheduled', 'safety', 'upgrade', 'full_backup'] as const;
export type ServiceBackupTrigger = (typeof SERVICE_BACKUP_TRIGGERS)[number];
export type ServiceBackupStatus = 'running' | 'completed' | 'failed';

export const serviceBackups = sqliteTable(
  'service_backups',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    serviceId: integer('service_id').notNull(),
    serviceName: text('service_name').notNull(),
    serviceType: text('service_type').notNull(),
    /** The version the dump was taken at (a restore into a service of an older version is refused). */
    version: text('version').notNull(),
    trigger: text('trigger').$type<ServiceBackupTrigger>().notNull(),
    status: text('status').$type<ServiceBackupStatus>().notNull().default('running'),
    /** File name under service-backups/<service_name>/: `svc-<name>-<UTC stamp>-<id>.<sql|rdb>.gz`. */
    filename: text('filename').notNull(),
    sizeBytes: integer('size_bytes'),
    error: text('error'),
    /** The upgrade whose step 1 this is (kept while that upgrade is open, whatever the retention). */
    upgradeId: integer('upgrade_id'),
    /** Trigger `full_backup`: the full-state backup whose `dumps/<service>.sql` this is (taken from its archive, not dumped). */
    fullBackupId: integer('full_backup_id'),
    completedAt: text('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('service_backups_service_idx').on(t.serviceId)],
);

/** One per (service backup, backup target): the work of the `service-backup:copy-<id>` key. */
export const serviceBackupUploads = sqliteTable(
  'service_backup_uploads',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    backupId: integer('backup_id')
      .notNull()
      .references(() => serviceBackups.id, { onDelete: 'cascade' }),
    targetId: integer('target_id')
      .notNull()
      .references(() => backupTargets.id, { onDelete: 'cascade' }),
    status: text('status').$type<UploadStatus>().notNull().default('pending'),
    /** `<prefix>services/<service>/<filename>.age`: beside the full backups' copies, never matched by their retention. */
    key: text('key').notNull(),
    sha256: text('sha256'),
    sizeBytes: integer('size_bytes'),
    verifiedAt: text('verified_at'),
    verifiedBy: text('verified_by', { enum: ['store_checksum', 'read_back'] }),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: text('next_attempt_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('service_backup_uploads_backup_target').on(t.backupId, t.targetId)],
);

export const SERVICE_RESTORE_STEPS = ['safety', 'wait_target', 'load', 'done'] as const;
export type ServiceRestoreStep = (typeof SERVICE_RESTORE_STEPS)[number];

/** A restore of one service backup into one service, advanced one step per pass. */
export const serviceRestores = sqliteTable(
  'service_restores',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    backupId: integer('backup_id').notNull(),
    /** The service loaded: the backup's own, or the new service a copy was made into. */
    serviceId: integer('service_id').notNull(),
    serviceName: text('service_name').notNull(),
    /** True for a restore into a new service (no safety backup: there is nothing to keep). */
    intoNew: integer('into_new', { mode: 'boolean' }).notNull().default(false),
    status: text('status').$type<'running' | 'completed' | 'failed'>().notNull().default('running'),
    step: text('step').$type<ServiceRestoreStep>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    safetyBackupId: integer('safety_backup_id'),
    error: text('error'),
    finishedAt: text('finished_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('service_restores_service_idx').on(t.serviceId)],
);

/** A service's own backup schedule and retention (`backup: {interval_minutes, retain}` on the service). */
export const serviceBackupPolicies = sqliteTable('service_backup_policies', {
  serviceId: integer('service_id')
    .primaryKey()
    .references(() => services.id, { onDelete: 'cascade' }),
  /** 0: no scheduled backups. */
  intervalMinutes: integer('interval_minutes').notNull().default(0),
  /** Completed backups kept per service (newest first), here and at every target. */
  retain: integer('retain').notNull().default(7),
  updatedAt: updatedAt(),
});

export type ServiceBackupRow = typeof serviceBackups.$inferSelect;
export type ServiceBackupUploadRow = typeof serviceBackupUploads.$inferSelect;
export type ServiceRestoreRow = typeof serviceRestores.$inferSelect;
export type ServiceBackupPolicyRow = typeof serviceBackupPolicies.$inferSelect;
