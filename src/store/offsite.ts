// Rows of backup targets and of their uploads (schema/offsite.ts). No rules here: the commands
// (desired/backup-targets.ts) and the offsite reconciler decide; these read and write.
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import type { Db } from './db.js';
import { backupTargets, backupUploads, backups, nowIso, type UploadStatus } from './schema/index.js';

export type TargetRow = typeof backupTargets.$inferSelect;
export type UploadRow = typeof backupUploads.$inferSelect;

export const listTargets = (db: Db): TargetRow[] => db.select().from(backupTargets).orderBy(asc(backupTargets.name)).all();
export const getTarget = (db: Db, id: number): TargetRow | undefined => db.select().from(backupTargets).where(eq(backupTargets.id, id)).get();
export const targetByName = (db: Db, name: string): TargetRow | undefined => db.select().from(backupTargets).where(eq(backupTargets.name, name)).get();

export interface TargetCredentials {
  access_key: string;
  secret_key: string;
}
export const openCredentials = (sealer: Sealer, row: TargetRow) => sealer.openJson<TargetCredentials>(row.credentials);

export const getUpload = (db: Db, id: number): UploadRow | undefined => db.select().from(backupUploads).where(eq(backupUploads.id, id)).get();
export const uploadsOf = (db: Db, backupId: number): UploadRow[] => db.select().from(backupUploads).where(eq(backupUploads.backupId, backupId)).orderBy(asc(backupUploads.targetId)).all();
export const uploadsIn = (db: Db, statuses: UploadStatus[]): UploadRow[] => db.select().from(backupUploads).where(inArray(backupUploads.status, statuses)).all();

/** One `pending` upload per target for a completed backup (idempotent); returns the new rows. */
export function insertUploads(db: Db, backupId: number, filename: string, objectKey: (prefix: string, filename: string) => string): UploadRow[] {
  const out: UploadRow[] = [];
  for (const t of listTargets(db)) {
    const row = db
      .insert(backupUploads)
      .values({ backupId, targetId: t.id, key: objectKey(t.prefix, filename) })
      .onConflictDoNothing()
      .returning()
      .get();
    if (row) out.push(row);
  }
  return out;
}

export function updateUpload(db: Db, id: number, values: Partial<Omit<UploadRow, 'id' | 'backupId' | 'targetId' | 'createdAt'>>): UploadRow | undefined {
  return db.update(backupUploads).set({ ...values, updatedAt: nowIso() }).where(eq(backupUploads.id, id)).returning().get();
}

/** Verified uploads of a target whose object key is one of `keys` become `removed` (remote retention). */
export function markRemoved(db: Db, targetId: number, keys: string[]): void {
  if (keys.length === 0) return;
  db.update(backupUploads).set({ status: 'removed', updatedAt: nowIso() }).where(and(eq(backupUploads.targetId, targetId), inArray(backupUploads.key, keys))).run();
}

/** The newest verified copy of a backup (the record's `remote`). */
export const newestVerified = (db: Db, backupId: number): UploadRow | undefined =>
  db.select().from(backupUploads).where(and(eq(backupUploads.backupId, backupId), eq(backupUploads.status, 'verified'))).orderBy(desc(backupUploads.verifiedAt)).get();

export const backupFilenameOf = (db: Db, backupId: number): string | undefined =>
  db.select({ f: backups.filename }).from(backups).where(eq(backups.id, backupId)).get()?.f;

