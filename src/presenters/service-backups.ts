// The JSON shapes of per-service backups (with their off-host copies), restores and schedules.
import type { Db } from '../store/db.js';
import { listTargets } from '../store/offsite.js';
import { policyOf, serviceUploadsOf, type ServiceBackupRow, type ServiceRestoreRow } from '../store/service-backups.js';
import { z } from 'zod';

const text = z.string().nullable();
const int = z.number().int();

export const serviceBackupPolicySchema = z.object({ interval_minutes: int, retain: int }).meta({ id: 'ServiceBackupPolicy' });

export const serviceBackupJsonSchema = z
  .object({
    id: int, service_id: int, service_name: z.string(), type: z.string(), version: z.string(),
    trigger: z.enum(['manual', 'scheduled', 'safety', 'upgrade', 'full_backup']), status: z.enum(['running', 'completed', 'failed']),
    filename: z.string(), size_bytes: int.nullable(), error: text, upgrade_id: int.nullable(), full_backup_id: int.nullable(), created_at: z.string(), completed_at: text,
    remote_status: z.enum(['none', 'pending', 'verified', 'remote_failed']),
    remotes: z.array(z.object({ target: text, status: z.string(), key: z.string(), sha256: text, verified_at: text, verified_by: text, error: text, attempts: int, next_attempt_at: text })),
  })
  .meta({ id: 'ServiceBackup' });

export const serviceRestoreJsonSchema = z
  .object({
    id: int, backup_id: int, service_id: int, service_name: z.string(), into_new: z.boolean(), status: z.enum(['running', 'completed', 'failed']),
    step: z.string(), safety_backup_id: int.nullable(), error: text, created_at: z.string(), finished_at: text,
  })
  .meta({ id: 'ServiceRestore' });

export function serviceBackupJson(db: Db, b: ServiceBackupRow): z.infer<typeof serviceBackupJsonSchema> {
  const names = new Map(listTargets(db).map((t) => [t.id, t.name]));
  const rows = serviceUploadsOf(db, b.id);
  const remote_status = rows.length === 0 ? 'none' : rows.some((r) => r.status === 'failed') ? 'remote_failed' : rows.every((r) => r.status === 'verified') ? 'verified' : 'pending';
  return {
    id: b.id,
    service_id: b.serviceId,
    service_name: b.serviceName,
    type: b.serviceType,
    version: b.version,
    trigger: b.trigger,
    status: b.status,
    filename: b.filename,
    size_bytes: b.sizeBytes,
    error: b.error,
    upgrade_id: b.upgradeId,
    full_backup_id: b.fullBackupId,
    created_at: b.createdAt,
    completed_at: b.completedAt,
    remote_status,
    remotes: rows.map((r) => ({
      target: names.get(r.targetId) ?? null,
      status: r.status === 'failed' ? 'remote_failed' : r.status,
      key: r.key,
      sha256: r.sha256,
      verified_at: r.verifiedAt,
      verified_by: r.verifiedBy,
      error: r.error,
      attempts: r.attempts,
      next_attempt_at: r.nextAttemptAt,
    })),
  };
}

export const serviceRestoreJson = (r: ServiceRestoreRow): z.infer<typeof serviceRestoreJsonSchema> => ({
  id: r.id,
  backup_id: r.backupId,
  service_id: r.serviceId,
  service_name: r.serviceName,
  into_new: r.intoNew,
  status: r.status,
  step: r.step,
  safety_backup_id: r.safetyBackupId,
  error: r.error,
  created_at: r.createdAt,
  finished_at: r.finishedAt,
});

export const servicePolicyJson = (db: Db, serviceId: number) => {
  const p = policyOf(db, serviceId);
  return { interval_minutes: p.intervalMinutes, retain: p.retain };
};
