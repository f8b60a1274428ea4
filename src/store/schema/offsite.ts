// Off-host copies (issue 21 section 1): the S3-compatible stores backups are copied to, and one upload row
// per (backup, target), the persisted work of the `offsite:<id>` reconciler, so a restart resumes an upload
// and a failed one keeps its reason and its next attempt. Both are kept live by a restore (snapshot.ts), like
// the backup records they describe.
import { sqliteTable, integer, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';
import { backups } from './misc.js';

export const backupTargets = sqliteTable('backup_targets', {
  id: integer('id').primaryKey(),
  name: text('name').notNull().unique(),
  /** Empty for AWS S3 itself (the SDK derives it from the region); else http(s)://host[:port]. */
  endpoint: text('endpoint'),
  region: text('region').notNull(),
  bucket: text('bucket').notNull(),
  /** Key prefix, '' or ending in '/'. */
  prefix: text('prefix').notNull().default(''),
  /** `{access_key, secret_key}` sealed with SVC_ENCRYPTION_KEY (crypto.ts), like every credential. */
  credentials: text('credentials').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const UPLOAD_STATUSES = ['pending', 'uploading', 'verified', 'failed', 'removed'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

export const backupUploads = sqliteTable(
  'backup_uploads',
  {
    id: integer('id').primaryKey(),
    backupId: integer('backup_id').notNull().references(() => backups.id, { onDelete: 'cascade' }),
    targetId: integer('target_id').notNull().references(() => backupTargets.id, { onDelete: 'cascade' }),
    status: text('status', { enum: UPLOAD_STATUSES }).notNull().default('pending'),
    /** The object key, fixed when the row is made: `<prefix><filename>.age`. */
    key: text('key').notNull(),
    /** SHA-256 (hex) of the encrypted bytes, computed while they were sent, once the read back matched. */
    sha256: text('sha256'),
    sizeBytes: integer('size_bytes'),
    verifiedAt: text('verified_at'),
    /** How it was verified: the store's own SHA-256 checksum, or a full read back (stores without one). */
    verifiedBy: text('verified_by', { enum: ['store_checksum', 'read_back'] }),
    /** The store's reason of the last failure (never a secret). */
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: text('next_attempt_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('backup_uploads_backup_target').on(t.backupId, t.targetId)],
);
