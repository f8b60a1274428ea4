// The backup aggregate's long operations, persisted (DESIGN.md rule 13): a restore and an import are rows
// that the request writes and a reconciler drives through phases, so a restarted daemon finishes or
// undoes them. Both tables are kept live by a restore (like `backups`): restoring never rolls them back.
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';

export const RESTORE_PHASES = ['pending', 'unpacking', 'safety_backup', 'swapping', 'committed', 'completed', 'failed'] as const;

/** One restore of a backup into the running daemon (`restore:<id>`). */
export const restores = sqliteTable('restores', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  backupId: integer('backup_id').notNull(),
  phase: text('phase', { enum: RESTORE_PHASES }).notNull().default('pending'),
  safetyBackupId: integer('safety_backup_id'),
  /** How many daemon starts found it unfinished; a restore that keeps dying is failed, not retried forever. */
  attempts: integer('attempts').notNull().default(0),
  error: text('error'),
  /** API.md code of a failure: invalid_archive, encryption_key_mismatch, service_on_other_node, restore_failed. */
  code: text('code'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const IMPORT_STATUSES = ['uploading', 'checking', 'completed', 'failed'] as const;

/**
 * One archive waiting for (or done with) its checks (`import:<id>`): uploaded in the request, or, with a
 * source, a copy in a backup target's bucket that the import reconciler downloads and decrypts first.
 */
export const imports = sqliteTable('imports', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  status: text('status', { enum: IMPORT_STATUSES }).notNull().default('uploading'),
  /** A copy to bring from a backup target (POST /api/backup-targets/{id}/remote/import): the target... */
  sourceTargetId: integer('source_target_id'),
  /** ...and the copy's object key in its bucket. */
  sourceKey: text('source_key'),
  sizeBytes: integer('size_bytes').notNull().default(0),
  /** The backup record the checked archive became. */
  backupId: integer('backup_id'),
  error: text('error'),
  code: text('code'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
