// Rows of per-service backups, their off-host copies and the restores of them (schema/service-backups.ts).
// No rules here: the command (desired/service-backups.ts) and the service-backup reconciler decide.
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import type { Db } from './db.js';
import {
  nowIso, serviceBackupPolicies, serviceBackups, serviceBackupUploads, serviceRestores, type ServiceBackupPolicyRow, type ServiceBackupRow,
  type ServiceBackupTrigger, type ServiceBackupUploadRow, type ServiceRestoreRow, type UploadStatus,
} from './schema/index.js';
import { listTargets } from './offsite.js';
import { backupOpsOf } from '../catalog/service-backup.js';
import type { ServiceType } from '../catalog/types.js';

export type { ServiceBackupRow, ServiceBackupUploadRow, ServiceRestoreRow, ServiceBackupPolicyRow } from './schema/index.js';

/** A backup's file name: the service, the UTC time to the second and the id (unique however fast they come). */
export const serviceBackupFilename = (name: string, at: Date, id: number, ext: string) =>
  `svc-${name}-${at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}-${id}.${ext}.gz`;
export const SERVICE_BACKUP_FILENAME = /^svc-[a-z][a-z0-9-]*-\d{8}-\d{6}-\d+\.(sql|rdb)\.gz$/;

export function insertServiceBackup(
  db: Db,
  s: { serviceId: number; serviceName: string; serviceType: string; version: string; trigger: ServiceBackupTrigger; ext: string; upgradeId?: number; fullBackupId?: number; now?: Date },
): ServiceBackupRow {
  return db.transaction(() => {
    const row = db
      .insert(serviceBackups)
      .values({ serviceId: s.serviceId, serviceName: s.serviceName, serviceType: s.serviceType, version: s.version, trigger: s.trigger, filename: '', upgradeId: s.upgradeId ?? null, fullBackupId: s.fullBackupId ?? null })
      .returning()
      .get();
    const filename = serviceBackupFilename(s.serviceName, s.now ?? new Date(), row.id, s.ext);
    db.update(serviceBackups).set({ filename }).where(eq(serviceBackups.id, row.id)).run();
    return { ...row, filename };
  });
}

/** A `running` record of a backup of the service now (its kind's extension in the name). */
export function newServiceBackup(db: Db, service: { id: number; name: string; type: ServiceType; version: string }, trigger: ServiceBackupTrigger, upgradeId?: number, fullBackupId?: number): ServiceBackupRow {
  const ops = backupOpsOf(service.type);
  if (!ops) throw new Error(`${service.type} services have no per-service backups yet`);
  return insertServiceBackup(db, { serviceId: service.id, serviceName: service.name, serviceType: service.type, version: service.version, trigger, ext: ops.ext, upgradeId, fullBackupId });
}

export const getServiceBackup = (db: Db, id: number): ServiceBackupRow | undefined => db.select().from(serviceBackups).where(eq(serviceBackups.id, id)).get();
export const serviceBackupsOf = (db: Db, serviceId: number): ServiceBackupRow[] =>
  db.select().from(serviceBackups).where(eq(serviceBackups.serviceId, serviceId)).orderBy(desc(serviceBackups.id)).all();
export const allServiceBackups = (db: Db): ServiceBackupRow[] => db.select().from(serviceBackups).orderBy(desc(serviceBackups.id)).all();
export const runningServiceBackups = (db: Db): ServiceBackupRow[] => db.select().from(serviceBackups).where(eq(serviceBackups.status, 'running')).all();
export const runningServiceBackupOf = (db: Db, serviceId: number): ServiceBackupRow | undefined =>
  db.select().from(serviceBackups).where(and(eq(serviceBackups.serviceId, serviceId), eq(serviceBackups.status, 'running'))).get();
/** The newest backup of a service made by `trigger` (the schedule counts from it). */
export const newestServiceBackup = (db: Db, serviceId: number, trigger: ServiceBackupTrigger): ServiceBackupRow | undefined =>
  db.select().from(serviceBackups).where(and(eq(serviceBackups.serviceId, serviceId), eq(serviceBackups.trigger, trigger))).orderBy(desc(serviceBackups.id)).get();

export function settleServiceBackup(db: Db, id: number, outcome: { sizeBytes: number } | { error: string }): ServiceBackupRow | undefined {
  const patch = 'error' in outcome ? { status: 'failed' as const, error: outcome.error } : { status: 'completed' as const, sizeBytes: outcome.sizeBytes };
  return db.update(serviceBackups).set({ ...patch, completedAt: nowIso() }).where(eq(serviceBackups.id, id)).returning().get();
}

export function deleteServiceBackupRecord(db: Db, id: number): void {
  db.delete(serviceBackups).where(eq(serviceBackups.id, id)).run();
}

// --- off-host copies ---

export const serviceObjectKey = (prefix: string, service: string, filename: string) => `${prefix}services/${service}/${filename}.age`;

/** One `pending` upload per target for a completed backup (idempotent); returns the new rows. */
export function insertServiceUploads(db: Db, b: ServiceBackupRow): ServiceBackupUploadRow[] {
  const out: ServiceBackupUploadRow[] = [];
  for (const t of listTargets(db)) {
    const row = db
      .insert(serviceBackupUploads)
      .values({ backupId: b.id, targetId: t.id, key: serviceObjectKey(t.prefix, b.serviceName, b.filename) })
      .onConflictDoNothing()
      .returning()
      .get();
    if (row) out.push(row);
  }
  return out;
}

export const getServiceUpload = (db: Db, id: number): ServiceBackupUploadRow | undefined => db.select().from(serviceBackupUploads).where(eq(serviceBackupUploads.id, id)).get();
export const serviceUploadsOf = (db: Db, backupId: number): ServiceBackupUploadRow[] =>
  db.select().from(serviceBackupUploads).where(eq(serviceBackupUploads.backupId, backupId)).orderBy(asc(serviceBackupUploads.targetId)).all();
export const serviceUploadsIn = (db: Db, statuses: UploadStatus[]): ServiceBackupUploadRow[] => db.select().from(serviceBackupUploads).where(inArray(serviceBackupUploads.status, statuses)).all();

export function updateServiceUpload(db: Db, id: number, values: Partial<Omit<ServiceBackupUploadRow, 'id' | 'backupId' | 'targetId' | 'createdAt'>>): void {
  db.update(serviceBackupUploads).set({ ...values, updatedAt: nowIso() }).where(eq(serviceBackupUploads.id, id)).run();
}

// --- restores ---

export function insertServiceRestore(db: Db, r: { backupId: number; serviceId: number; serviceName: string; intoNew: boolean }): ServiceRestoreRow {
  return db.insert(serviceRestores).values({ ...r, step: r.intoNew ? 'wait_target' : 'safety' }).returning().get();
}
export const getServiceRestore = (db: Db, id: number): ServiceRestoreRow | undefined => db.select().from(serviceRestores).where(eq(serviceRestores.id, id)).get();
export const runningServiceRestores = (db: Db): ServiceRestoreRow[] => db.select().from(serviceRestores).where(eq(serviceRestores.status, 'running')).all();
export const runningRestoreOf = (db: Db, serviceId: number): ServiceRestoreRow | undefined =>
  db.select().from(serviceRestores).where(and(eq(serviceRestores.serviceId, serviceId), eq(serviceRestores.status, 'running'))).get();
export const serviceRestoresOf = (db: Db, serviceId: number): ServiceRestoreRow[] =>
  db.select().from(serviceRestores).where(eq(serviceRestores.serviceId, serviceId)).orderBy(desc(serviceRestores.id)).all();

export function updateServiceRestore(db: Db, id: number, patch: Partial<Omit<ServiceRestoreRow, 'id' | 'createdAt'>>): void {
  db.update(serviceRestores).set({ ...patch, updatedAt: nowIso() }).where(eq(serviceRestores.id, id)).run();
}

// --- schedule and retention ---

export const DEFAULT_POLICY = { intervalMinutes: 0, retain: 7 };
export const policyOf = (db: Db, serviceId: number): Pick<ServiceBackupPolicyRow, 'intervalMinutes' | 'retain'> =>
  db.select().from(serviceBackupPolicies).where(eq(serviceBackupPolicies.serviceId, serviceId)).get() ?? DEFAULT_POLICY;
export const scheduledPolicies = (db: Db): ServiceBackupPolicyRow[] => db.select().from(serviceBackupPolicies).all().filter((p) => p.intervalMinutes > 0);
