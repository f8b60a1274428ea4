// The JSON shapes of backups, restores, imports, backup targets and their uploads, as the REST API and
// the backup pages show them: never a credential, only whether one is set and the access key's tail.
import type { Sealer } from '../crypto.js';
import type { Db } from '../store/db.js';
import type { BackupRow } from '../store/backups.js';
import type { ImportRow, RestoreRow } from '../store/backup-ops.js';
import { listTargets, newestVerified, openCredentials, uploadsOf, type TargetRow, type UploadRow } from '../store/offsite.js';

/** The API shape (SPEC.md 2.7 plus `trigger` and `error`). */
export function backupJson(row: BackupRow) {
  return {
    id: row.id,
    filename: row.filename,
    size_bytes: row.sizeBytes,
    type: row.type,
    status: row.status,
    trigger: row.trigger,
    error: row.error,
    created_at: row.createdAt,
  };
}

/** A restore run (POST /api/backups/{id}/restore and its progress). */
export function restoreJson(row: RestoreRow) {
  return {
    id: row.id,
    backup_id: row.backupId,
    phase: row.phase,
    safety_backup_id: row.safetyBackupId,
    error: row.error,
    code: row.code,
    restart_required: false,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** An import run (an uploaded or off-host archive taken in). */
export function importJson(row: ImportRow) {
  return {
    id: row.id,
    status: row.status,
    size_bytes: row.sizeBytes,
    backup_id: row.backupId,
    error: row.error,
    code: row.code,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

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
