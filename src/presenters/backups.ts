// The JSON shapes of backups, restores, imports, backup targets and their uploads, as the REST API and
// the backup pages show them: never a credential, only whether one is set and the access key's tail.
import type { Sealer } from '../crypto.js';
import type { Db } from '../store/db.js';
import type { BackupRow } from '../store/backups.js';
import type { ImportRow, RestoreRow } from '../store/backup-ops.js';
import { listTargets, newestVerified, openCredentials, uploadsOf, type TargetRow, type UploadRow } from '../store/offsite.js';
import { z } from 'zod';

const text = z.string().nullable();
const int = z.number().int();

export const uploadJsonSchema = z
  .object({
    target: text, target_id: int, status: z.string().describe('pending, uploading, verified, remote_failed, removed'), key: z.string(), sha256: text,
    size_bytes: int.nullable(), verified_at: text, verified_by: z.enum(['store_checksum', 'read_back']).nullable(), error: text, attempts: int,
    next_attempt_at: text,
  })
  .meta({ id: 'BackupUpload' });

/** backupJson with remoteFields: the shape every backup answer of the API has. */
export const backupJsonSchema = z
  .object({
    id: int, filename: z.string(), size_bytes: int, type: z.string(), status: z.enum(['running', 'completed', 'failed']),
    trigger: z.enum(['manual', 'scheduled', 'safety', 'import']), error: text, created_at: z.string(),
    remote: z.object({ target: text, key: z.string(), sha256: text, verified_at: text, verified_by: text }).nullable(),
    remote_status: z.enum(['none', 'pending', 'verified', 'remote_failed', 'removed']),
    remotes: z.array(uploadJsonSchema),
  })
  .meta({ id: 'Backup' });

export const restoreJsonSchema = z
  .object({ id: int, backup_id: int, phase: z.string(), safety_backup_id: int.nullable(), error: text, code: text, restart_required: z.boolean(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: 'Restore' });

export const importJsonSchema = z
  .object({ id: int, status: z.string(), size_bytes: int, backup_id: int.nullable(), error: text, code: text, created_at: z.string(), updated_at: z.string() })
  .meta({ id: 'BackupImport' });

export const targetJsonSchema = z
  .object({ id: int, name: z.string(), endpoint: text, region: z.string(), bucket: z.string(), prefix: z.string(), access_key_hint: text, created_at: z.string(), updated_at: z.string() })
  .meta({ id: 'BackupTarget' });

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

/** A backup as the API answers it: the record with its off-host copies (docs/api.md "Off-host backup copies"). */
export const backupWithCopiesJson = (db: Db, row: BackupRow) => ({ ...backupJson(row), ...remoteFields(db, row.id) });
