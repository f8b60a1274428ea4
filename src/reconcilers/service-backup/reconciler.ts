// The service-backup reconciler (issue 33 section 3, decision 0052): key `service-backup:<name>`.
//   <id>          takes a `running` service backup (take.ts)
//   copy-<id>     copies a service backup to one target, encrypted and verified (src/offsite/copy.ts)
//   restore-<id>  advances a service restore one step: safety backup, wait for a new service, load
//   schedule      creates each service's scheduled backups and comes back at the next slot
//   files         retention per service (local file, remote copies, record) and files no record owns
// Behind the backup gate: a full-state restore swaps the services' data under it.
import { createReadStream, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { dataPathOf, kindOf } from '../../catalog/catalog.js';
import { backupOpsOf } from '../../catalog/service-backup.js';
import { keyOf, type Enqueue, type Reconciler, type ReconcileCtx, type Result } from '../../controller/types.js';
import type { Sealer } from '../../crypto.js';
import type { Logger } from '../../log.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import { nowIso } from '../../store/schema/index.js';
import { getService, listServices, openCredentials } from '../../store/services.js';
import type { ServiceView } from '../../store/service-view.js';
import { openUpgradeOf, addServiceEvent } from '../../store/service-upgrades.js';
import { getTarget, openCredentials as openTargetCredentials } from '../../store/offsite.js';
import {
  SERVICE_BACKUP_FILENAME, allServiceBackups, deleteServiceBackupRecord, getServiceBackup, getServiceRestore, getServiceUpload, newestServiceBackup, policyOf,
  runningServiceBackupOf, runningServiceBackups, runningServiceRestores, scheduledPolicies, serviceBackupsOf, serviceUploadsIn, serviceUploadsOf,
  updateServiceRestore, updateServiceUpload, type ServiceBackupRow, type ServiceRestoreRow,
} from '../../store/service-backups.js';
import type { AgeKey } from '../../offsite/age.js';
import { copyToTarget, CopyError, type CopyInput, type CopyOutcome } from '../../offsite/copy.js';
import { s3ClientFor, type TargetConfig } from '../../offsite/s3.js';
import { deleteObject } from '../../offsite/upload.js';
import { planSchedule } from '../backup/plan.js';
import { planUpload, retryDelayMs } from '../offsite/plan.js';
import { redact } from '../restart.js';
import { beyondServiceRetention, parseServiceBackupKey, planServiceRestore, type RestoreFacts } from './plan.js';
import { newServiceBackup, serviceBackupPath, takeServiceBackup, type TakeDeps } from './take.js';
import type { S3Client } from '@aws-sdk/client-s3';

export interface ServiceBackupReconcilerDeps extends TakeDeps {
  enqueue: Enqueue;
  now: () => number;
  settings: { age: AgeKey | undefined; retrySeconds: number };
  /** Seams for unit tests; default to the real S3 client and copy. */
  clientFor?: (t: TargetConfig) => S3Client;
  copy?: (i: CopyInput) => Promise<CopyOutcome>;
}

export function createServiceBackupReconciler(d: ServiceBackupReconcilerDeps): Reconciler {
  const firstSeenAt = d.now();
  const clientFor = d.clientFor ?? s3ClientFor;
  const copy = d.copy ?? copyToTarget;

  const targetConfig = (targetId: number): TargetConfig | undefined => {
    const t = getTarget(d.db, targetId);
    if (!t) return undefined;
    const c = openTargetCredentials(d.sealer, t);
    return { name: t.name, endpoint: t.endpoint, region: t.region, bucket: t.bucket, prefix: t.prefix, accessKey: c.access_key, secretKey: c.secret_key };
  };

  async function take(id: number): Promise<Result> {
    const b = getServiceBackup(d.db, id);
    if (!b || b.status !== 'running') return {};
    await takeServiceBackup(d, b).catch(() => {});
    return {};
  }

  async function copyOne(id: number, ctx?: ReconcileCtx): Promise<Result> {
    const u = getServiceUpload(d.db, id);
    if (!u) return {};
    const plan = planUpload(u, d.now());
    if (plan.action === 'none') return {};
    if (plan.action === 'wait') return { requeueAfterMs: plan.inMs };
    const b = getServiceBackup(d.db, u.backupId);
    const config = targetConfig(u.targetId);
    if (!b || !config) return {};
    const attempts = u.attempts + 1;
    updateServiceUpload(d.db, id, { status: 'uploading', attempts });
    d.changed?.();
    const client = clientFor(config);
    try {
      // Its own prefix: the full backups' retention never sees these, and this one lists only its service.
      const out = await copy({ client, bucket: config.bucket, prefix: `${config.prefix}services/${b.serviceName}/`, key: u.key, file: serviceBackupPath(d.dataDir, b), age: d.settings.age, retain: Number.MAX_SAFE_INTEGER, signal: ctx?.signal });
      updateServiceUpload(d.db, id, { status: 'verified', sha256: out.sha256, sizeBytes: out.size, verifiedAt: nowIso(), verifiedBy: out.verifiedBy, error: null, nextAttemptAt: null });
      d.log.info('service backup uploaded', { service: b.serviceName, backup_id: b.id, target: config.name, size: out.size, verified_by: out.verifiedBy });
      return {};
    } catch (err) {
      if (ctx?.signal.aborted) return {};
      const reason = err instanceof CopyError ? err.message : `upload: ${err instanceof Error ? err.message : String(err)}`;
      const delay = retryDelayMs(attempts, d.settings.retrySeconds);
      updateServiceUpload(d.db, id, { status: 'failed', error: reason, nextAttemptAt: new Date(d.now() + delay).toISOString().replace(/\.\d{3}Z$/, 'Z') });
      d.log.warn('service backup upload failed', { service: b.serviceName, backup_id: b.id, target: config.name, error: reason, attempts });
      return { requeueAfterMs: delay };
    } finally {
      client.destroy();
      d.changed?.();
    }
  }

  function schedule(): Result {
    let next = Number.POSITIVE_INFINITY;
    for (const p of scheduledPolicies(d.db)) {
      const svc = getService(d.db, p.serviceId);
      if (!svc || svc.deletedAt || !backupOpsOf(svc.type)) continue;
      const last = newestServiceBackup(d.db, svc.id, 'scheduled');
      const plan = planSchedule(
        { now: d.now(), intervalMinutes: p.intervalMinutes, lastScheduledAt: last ? Date.parse(last.createdAt) : undefined, running: runningServiceBackupOf(d.db, svc.id) !== undefined },
        firstSeenAt,
      );
      if (plan.action === 'wait') next = Math.min(next, plan.inMs);
      if (plan.action === 'busy') next = Math.min(next, plan.retryInMs);
      if (plan.action === 'create') {
        // A stopped or not yet active service is skipped for this slot (its data is at rest in the full backups).
        if (svc.status === 'active' && svc.desiredRunning) {
          const b = newServiceBackup(d.db, svc, 'scheduled');
          d.enqueue(keyOf('service-backup', String(b.id)));
        }
        next = Math.min(next, plan.nextInMs);
      }
    }
    return Number.isFinite(next) ? { requeueAfterMs: next } : {};
  }

  /** Backups still needed whatever the retention: an open upgrade's, a running restore's source and safety. */
  function needed(): Set<number> {
    const out = new Set<number>();
    for (const r of runningServiceRestores(d.db)) {
      out.add(r.backupId);
      if (r.safetyBackupId) out.add(r.safetyBackupId);
    }
    for (const s of listServices(d.db)) {
      const up = openUpgradeOf(d.db, s.id);
      if (!up) continue;
      for (const b of serviceBackupsOf(d.db, s.id)) if (b.upgradeId === up.id) out.add(b.id);
    }
    return out;
  }

  async function dropBackup(b: ServiceBackupRow) {
    for (const u of serviceUploadsOf(d.db, b.id)) {
      if (u.status !== 'verified') continue;
      const config = targetConfig(u.targetId);
      if (!config) continue;
      const client = clientFor(config);
      try {
        await deleteObject(client, config.bucket, u.key);
      } catch (err) {
        d.log.warn('service backup: removing the remote copy failed', { target: config.name, key: u.key, error: err instanceof Error ? err.message : String(err) });
      } finally {
        client.destroy();
      }
    }
    await rm(serviceBackupPath(d.dataDir, b), { force: true });
    deleteServiceBackupRecord(d.db, b.id);
    d.log.info('service backup deleted', { service: b.serviceName, id: b.id, reason: 'retention' });
  }

  async function files(): Promise<Result> {
    const keep = needed();
    // Retention per existing service; a deleted service's backups stay until deleted by hand.
    for (const s of listServices(d.db)) {
      const rows = serviceBackupsOf(d.db, s.id);
      const drop = new Set(beyondServiceRetention(rows, policyOf(d.db, s.id).retain, keep));
      for (const b of rows) if (drop.has(b.id)) await dropBackup(b);
    }
    // Published files no record owns (a record deleted through the API, a crash between file and record).
    const owned = new Set(allServiceBackups(d.db).map((b) => `${b.serviceName}/${b.filename}`));
    const root = join(d.dataDir, 'service-backups');
    for (const dir of existsSync(root) ? await readdir(root) : []) {
      for (const f of await readdir(join(root, dir)).catch(() => [] as string[])) {
        if (SERVICE_BACKUP_FILENAME.test(f) && !owned.has(`${dir}/${f}`)) await rm(join(root, dir, f), { force: true });
      }
    }
    d.changed?.();
    return {};
  }

  // --- restores ---

  const event = (serviceId: number, kind: string, message: string) => {
    if (getService(d.db, serviceId)) addServiceEvent(d.db, serviceId, kind, message);
  };

  async function exec(container: string, c: { cmd: string[]; env?: Record<string, string> }, what: string, secrets: string[], expected: RegExp[] = []) {
    const res = await d.runtime.exec(container, c.cmd, c.env ? { env: c.env } : undefined);
    const errors = res.stderr.split('\n').filter((l) => /ERROR|svc: /.test(l) && !expected.some((e) => e.test(l)));
    if (res.exitCode !== 0 || errors.length > 0) {
      throw new Error(`${what} failed (exit ${res.exitCode}): ${redact((errors.length ? errors : res.stderr.trim().split('\n')).slice(-3).join(' '), secrets)}`);
    }
  }

  /** Clears the service and loads a backup into it: the dump is unpacked into its data directory for the time of the load. */
  async function load(svc: ServiceView, b: ServiceBackupRow) {
    const kind = kindOf(svc.type);
    const ops = backupOpsOf(svc.type)!;
    const creds = openCredentials(d.sealer, svc);
    const name = `.svc-restore-${b.id}.${ops.ext}`;
    const host = join(svc.dataDir, name);
    try {
      mkdirSync(svc.dataDir, { recursive: true });
      await pipeline(createReadStream(serviceBackupPath(d.dataDir, b)), createGunzip(), createWriteStream(host, { mode: 0o644 }));
      const inContainer = `${dataPathOf(kind, svc.version)}/${name}`;
      if (ops.clear) await exec(svc.containerName, ops.clear(creds), 'clearing the service', Object.values(creds));
      await exec(svc.containerName, ops.load(creds, inContainer), 'the load', Object.values(creds), ops.expectedLoadErrors(creds));
    } finally {
      await rm(host, { force: true });
    }
  }

  async function restoreFacts(r: ServiceRestoreRow, svc: ServiceView | undefined, b: ServiceBackupRow | undefined): Promise<RestoreFacts> {
    const backup = !b ? 'missing' : b.status === 'running' ? 'running' : b.status !== 'completed' ? 'not_completed' : existsSync(serviceBackupPath(d.dataDir, b)) ? 'ready' : 'missing';
    let target: RestoreFacts['target'];
    if (!svc || svc.deletedAt) target = 'gone';
    else if (!svc.desiredRunning) target = 'stopped';
    else if (svc.status !== 'active') target = 'starting';
    else target = (await d.runtime.dataNodeOf(svc.containerName)) ? 'other_node' : 'active';
    return { backup, target, nowMs: d.now(), stepSinceMs: Date.parse(r.updatedAt) };
  }

  function finish(r: ServiceRestoreRow, status: 'completed' | 'failed', message: string, error?: string) {
    d.db.transaction(() => {
      updateServiceRestore(d.db, r.id, { status, step: 'done', error: error ?? null, finishedAt: nowIso() });
      event(r.serviceId, status === 'completed' ? 'restore_completed' : 'restore_failed', message);
    });
    d.changed?.();
    d.log[status === 'completed' ? 'info' : 'error']('service restore ' + status, { restore_id: r.id, service: r.serviceName, backup_id: r.backupId, error });
  }

  async function restore(id: number): Promise<Result> {
    const r = getServiceRestore(d.db, id);
    if (!r || r.status !== 'running') return {};
    const b = getServiceBackup(d.db, r.backupId);
    const svc = getService(d.db, r.serviceId);
    const plan = planServiceRestore(r, await restoreFacts(r, svc, b));
    if (plan.kind === 'none') return {};
    if (plan.kind === 'wait') return { requeueAfterMs: plan.afterMs };
    if (plan.kind === 'fail') {
      finish(r, 'failed', `restore ${r.id} of backup ${r.backupId} failed: ${plan.reason}; the service was not changed`, plan.reason);
      return {};
    }
    updateServiceRestore(d.db, r.id, { attempts: r.attempts + 1 });
    if (plan.step === 'safety') {
      const safety = newServiceBackup(d.db, svc!, 'safety');
      updateServiceRestore(d.db, r.id, { safetyBackupId: safety.id });
      try {
        await takeServiceBackup(d, safety);
      } catch (err) {
        finish(r, 'failed', `restore ${r.id}: the safety backup failed; the service was not changed`, `safety backup: ${err instanceof Error ? err.message : String(err)}`);
        return {};
      }
      d.db.transaction(() => {
        updateServiceRestore(d.db, r.id, { step: 'load', attempts: 0 });
        event(r.serviceId, 'restore_safety_backup', `restore ${r.id}: safety backup ${safety.id} taken; loading backup ${r.backupId}`);
      });
      return { requeueAfterMs: 0 };
    }
    const started = d.now();
    try {
      await load(svc!, b!);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const safety = r.safetyBackupId ? getServiceBackup(d.db, r.safetyBackupId) : undefined;
      if (!safety || safety.status !== 'completed') {
        finish(r, 'failed', `restore ${r.id} of backup ${r.backupId} failed: ${why}`, why);
        return {};
      }
      // The service was cleared: it gets its data of just before the restore back.
      try {
        await load(svc!, safety);
        finish(r, 'failed', `restore ${r.id} of backup ${r.backupId} failed (${why}); the service was loaded back from safety backup ${safety.id}`, why);
      } catch (again) {
        finish(r, 'failed', `restore ${r.id} failed (${why}) and loading safety backup ${safety.id} back failed too (${again instanceof Error ? again.message : String(again)}); restore it by hand`, why);
      }
      return {};
    }
    finish(r, 'completed', `backup ${r.backupId} (${b!.serviceName}, ${b!.createdAt}) loaded into ${svc!.name} in ${((d.now() - started) / 1000).toFixed(1)} s`);
    return {};
  }

  return {
    kind: 'service-backup',
    listNames: () => [
      ...runningServiceBackups(d.db).map((b) => String(b.id)),
      ...serviceUploadsIn(d.db, ['pending', 'uploading', 'failed']).map((u) => `copy-${u.id}`),
      ...runningServiceRestores(d.db).map((r) => `restore-${r.id}`),
      ...(scheduledPolicies(d.db).length > 0 ? ['schedule'] : []),
      'files',
    ],
    async reconcile(name, ctx) {
      const key = parseServiceBackupKey(name);
      if (!key) return {};
      switch (key.kind) {
        case 'backup':
          return take(key.id);
        case 'copy':
          return copyOne(key.id, ctx);
        case 'restore':
          return restore(key.id);
        case 'schedule':
          return schedule();
        case 'files':
          return files();
      }
    },
  };
}
