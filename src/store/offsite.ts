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

/** The API shape of a target: never the credentials, only whether they are set and the access key's tail. */
export function targetJson(row: TargetRow, sealer: Sealer) {
  let hint: string | null = null;
  try {
    const k = openCredentials(sealer, row).access_key;
    hint = k.length > 4 ? `…${k.slice(-4)}` : '…';
  } catch {
    hint = null;
  }
  return {
    id: row.id,
    name: row.name,
    endpoint: row.endpoint,
    region: row.region,
    bucket: row.bucket,
    prefix: row.prefix,
    access_key_hint: hint,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** One upload as shown on a backup record (`remotes[]`). */
export function uploadJson(row: UploadRow, targetName: string | undefined) {
  return {
    target: targetName ?? null,
    target_id: row.targetId,
    status: row.status === 'failed' ? 'remote_failed' : row.status,
    key: row.key,
    sha256: row.sha256,
    size_bytes: row.sizeBytes,
    verified_at: row.verifiedAt,
    verified_by: row.verifiedBy,
    error: row.error,
    attempts: row.attempts,
    next_attempt_at: row.status === 'failed' ? row.nextAttemptAt : null,
  };
}

/**
 * The off-host part of a backup record: `remote` is the newest verified copy `{target, key, sha256,
 * verified_at}` (null until one is verified), `remote_status` sums up every target (`remote_failed` as soon
 * as one failed: never shown as success), `remotes` lists each.
 */
export function remoteFields(db: Db, backupId: number) {
  const rows = uploadsOf(db, backupId);
  if (rows.length === 0) return { remote: null, remote_status: 'none', remotes: [] as ReturnType<typeof uploadJson>[] };
  const names = new Map(listTargets(db).map((t) => [t.id, t.name]));
  const remotes = rows.map((r) => uploadJson(r, names.get(r.targetId)));
  const v = newestVerified(db, backupId);
  const status = rows.some((r) => r.status === 'failed')
    ? 'remote_failed'
    : rows.some((r) => r.status === 'pending' || r.status === 'uploading')
      ? 'pending'
      : rows.every((r) => r.status === 'removed')
        ? 'removed'
        : 'verified';
  return {
    remote: v ? { target: names.get(v.targetId) ?? null, key: v.key, sha256: v.sha256, verified_at: v.verifiedAt, verified_by: v.verifiedBy } : null,
    remote_status: status,
    remotes,
  };
}
