// Writes one service backup (a `running` service_backups row): the type's dump taken in the service's
// container, streamed to a work file, gzip-compressed (level 1: the dump is the slow half) into the
// published file under <SVC_DATA_DIR>/service-backups/<service>/, then the record is settled and one copy
// per backup target queued. Shared by the service-backup reconciler and the guarded upgrade's step 1.
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { kindOf } from '../../catalog/catalog.js';
export { newServiceBackup } from '../../store/service-backups.js';
import { backupOpsOf } from '../../catalog/service-backup.js';
import { keyOf, type Enqueue } from '../../controller/types.js';
import type { Sealer } from '../../crypto.js';
import type { Logger } from '../../log.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import { getService, openCredentials } from '../../store/services.js';
import { insertServiceUploads, settleServiceBackup, type ServiceBackupRow } from '../../store/service-backups.js';
import { addServiceEvent } from '../../store/service-upgrades.js';
import { redact } from '../restart.js';
import { extractServiceDump } from '../../backup/archive-dump.js';
import { getBackup } from '../../store/backups.js';

export interface TakeDeps {
  db: Db;
  runtime: Runtime;
  sealer: Sealer;
  log: Logger;
  /** SVC_DATA_DIR. */
  dataDir: string;
  /** SVC_BACKUP_DIR, where full-state archives are (a `full_backup` record is taken from one). */
  backupDir?: string;
  /** Queues the off-host copies (`service-backup:copy-<id>`); absent, none are queued (unit tests). */
  enqueue?: Enqueue;
  /** A row changed (wakes requests waiting for it). */
  changed?: () => void;
}

/** Where a service's backups are kept (outside services/, so a full backup does not carry them twice). */
export const serviceBackupDir = (dataDir: string, name: string) => join(dataDir, 'service-backups', name);
export const serviceBackupPath = (dataDir: string, b: Pick<ServiceBackupRow, 'serviceName' | 'filename'>) => join(serviceBackupDir(dataDir, b.serviceName), b.filename);

/** A `full_backup` record: the service's `dumps/<name>.sql` of that archive, as its file. */
async function fromFullBackup(d: TakeDeps, b: ServiceBackupRow, file: string, gz: string): Promise<ServiceBackupRow> {
  const full = getBackup(d.db, b.fullBackupId!);
  if (!full || full.status !== 'completed' || !d.backupDir) throw new Error(`full backup ${b.fullBackupId} is not a completed backup on this host`);
  if (!(await extractServiceDump(join(d.backupDir, full.filename), b.serviceName, gz))) throw new Error(`full backup ${full.id} holds no dump of ${b.serviceName} (the service was stopped then, or is of a type without one)`);
  await rename(gz, file);
  const size = (await stat(file)).size;
  const done = d.db.transaction(() => {
    const row = settleServiceBackup(d.db, b.id, { sizeBytes: size })!;
    addServiceEvent(d.db, b.serviceId, 'backup_completed', `backup ${b.id}: the dump of ${b.serviceName} in full backup ${full.id} (${full.filename}), ${size} bytes`);
    return row;
  });
  d.changed?.();
  return done;
}

/** Takes the backup of a running record; resolves to the settled record, throws (after recording why) when it failed. */
export async function takeServiceBackup(d: TakeDeps, b: ServiceBackupRow): Promise<ServiceBackupRow> {
  const started = Date.now();
  const file = serviceBackupPath(d.dataDir, b);
  const raw = `${file}.partial`;
  const gz = `${file}.gz-partial`;
  try {
    const svc = getService(d.db, b.serviceId);
    if (!svc || svc.deletedAt) throw new Error('the service was deleted');
    const ops = backupOpsOf(svc.type);
    if (!ops || kindOf(svc.type).type !== b.serviceType) throw new Error(`${svc.type} services have no per-service backups yet`);
    if (await d.runtime.dataNodeOf(svc.containerName)) throw new Error('the service keeps its data on another Swarm node; service backups run on the manager only for now');
    const creds = openCredentials(d.sealer, svc);
    mkdirSync(serviceBackupDir(d.dataDir, b.serviceName), { recursive: true, mode: 0o700 });
    if (b.fullBackupId !== null) return await fromFullBackup(d, b, file, gz);
    const dump = ops.dump(creds);
    const res = await d.runtime.execToFile(svc.containerName, dump.cmd, raw, { env: dump.env });
    if (res.exitCode !== 0) throw new Error(`the dump failed (exit ${res.exitCode}): ${redact(res.stderr.trim().split('\n').slice(-3).join(' '), Object.values(creds))}`);
    await pipeline(createReadStream(raw), createGzip({ level: 1 }), createWriteStream(gz, { mode: 0o600 }));
    await rename(gz, file);
    const size = (await stat(file)).size;
    const done = d.db.transaction(() => {
      const row = settleServiceBackup(d.db, b.id, { sizeBytes: size })!;
      addServiceEvent(d.db, b.serviceId, 'backup_completed', `backup ${b.id} (${b.trigger}) written: ${b.filename}, ${size} bytes`, b.upgradeId);
      return row;
    });
    for (const u of insertServiceUploads(d.db, done)) d.enqueue?.(keyOf('service-backup', `copy-${u.id}`));
    d.enqueue?.(keyOf('service-backup', 'files'));
    d.log.info('service backup created', { service: b.serviceName, id: b.id, trigger: b.trigger, size, duration_ms: Date.now() - started });
    return done;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    await rm(gz, { force: true });
    d.db.transaction(() => {
      settleServiceBackup(d.db, b.id, { error: reason });
      if (getService(d.db, b.serviceId)) addServiceEvent(d.db, b.serviceId, 'backup_failed', `backup ${b.id} (${b.trigger}) failed: ${reason}`, b.upgradeId);
    });
    d.log.error('service backup failed', { service: b.serviceName, id: b.id, trigger: b.trigger, error: reason });
    throw err;
  } finally {
    await rm(raw, { force: true });
    d.changed?.();
  }
}
