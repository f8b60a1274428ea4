// The backup part of the composition root: settles what an earlier process left half-done (a `running`
// record, work files, an upload being received, a restore mid-swap), then registers the backup, restore and
// import reconcilers with the archive builder, the restore and the checks bound to this daemon's paths,
// engine and gate. None of them is behind the gate: a restore is what closes it.
import type { Config } from '../config.js';
import { systemClock } from '../controller/clock.js';
import type { Manager } from '../controller/manager.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { insertWithFreeName, type BackupRow } from '../store/backups.js';
import { createBackupReconciler, type BackupReconciler } from '../reconcilers/backup/reconciler.js';
import { downloadRemoteCopy } from '../offsite/remote-import.js';
import type { ImportRow } from '../store/backup-ops.js';
import { createImportReconciler, createRestoreReconciler } from '../reconcilers/backup/operations.js';
import type { BackupControl } from '../backup/control.js';
import { createArchive } from '../backup/create-archive.js';
import { checkImport, recoverUploads } from '../backup/import.js';
import { loadPendingDumps, pendingDumps } from '../backup/pending-dumps.js';
import { createProgress } from '../backup/progress.js';
import type { Bus } from '../controller/bus.js';
import type { Gate } from '../backup/quiesce.js';
import { recoverInterruptedBackups } from '../backup/recover.js';
import { recoverRestores, stepRestore } from '../backup/restore.js';
import { keyOf } from '../controller/types.js';
import { insertUploads } from '../store/offsite.js';
import { objectKey } from '../offsite/s3.js';
import type { AgeKey } from '../offsite/age.js';
import { createOffsiteReconciler } from '../reconcilers/offsite/reconciler.js';

export interface BackupWiring {
  reconciler: BackupReconciler;
  control: BackupControl;
}

/** Call before the API serves and before `manager.start()`: recovery must come first. */
export function wireBackups(d: { config: Config; db: Db; sealer: Sealer; log: Logger; runtime: Runtime; manager: Manager; gate: Gate; bus: Bus }): BackupWiring {
  const { config, db, sealer, log, runtime, manager, gate } = d;
  const progress = createProgress(d.bus);
  recoverRestores(db, config.dataDir, log);
  recoverInterruptedBackups({ db, bus: d.bus }, config.backupDir, log);
  recoverUploads(db, config.backupDir);
  const archiveDeps = { db, sealer, runtime, log, dataDir: config.dataDir, backupDir: config.backupDir, effectiveEnv: config.effectiveEnv, envFile: config.envFile };
  const dumpDeps = { db, sealer, runtime, log, dataDir: config.dataDir };
  const reconciler = createBackupReconciler({
    db,
    bus: d.bus,
    log,
    clock: systemClock,
    enqueue: manager.enqueue,
    backupDir: config.backupDir,
    settings: config.backup,
    build: (row) => createArchive(archiveDeps, row.filename),
    dumps: { waiting: () => pendingDumps(config.dataDir).length > 0, load: () => loadPendingDumps(dumpDeps) },
    changed: progress.changed,
    // Every completed backup (manual, scheduled, safety) gets one upload row per target, in its own key.
    completed: (row) => {
      for (const u of insertUploads(db, row.id, row.filename, objectKey)) manager.enqueue(keyOf('offsite', String(u.id)));
    },
  });
  const restoreDeps = {
    db,
    sealer,
    runtime,
    log,
    dataDir: config.dataDir,
    backupDir: config.backupDir,
    instance: config.instance,
    gate,
    newSafetyBackup: () => insertWithFreeName(db, new Date(), { status: 'running', trigger: 'safety' }),
    buildBackup: (row: BackupRow) => reconciler.buildNow(row),
    resync: async () => {
      await manager.enqueueAll();
      manager.enqueue('backup:dumps');
    },
    changed: progress.changed,
  };
  const fetchCopy = (row: ImportRow, dest: string) => downloadRemoteCopy({ db, sealer, passphrase: config.offsite.passphrase }, row, dest);
  manager.register(reconciler);
  manager.register(createRestoreReconciler({ db, step: (id) => stepRestore(restoreDeps, id) }));
  manager.register(
    createImportReconciler({
      db,
      check: (id) => checkImport({ db, backupDir: config.backupDir, log, now: () => new Date(), changed: progress.changed, download: fetchCopy }, id),
    }),
  );
  manager.register(
    createOffsiteReconciler({
      db,
      sealer,
      log,
      bus: d.bus,
      now: Date.now,
      backupDir: config.backupDir,
      settings: { age: ageKeyOf(config), retainCount: config.offsite.retainCount, retrySeconds: config.offsite.retrySeconds },
      changed: progress.changed,
    }),
  );
  return { reconciler, control: { progress } };
}

/** What off-host copies are encrypted for: the age recipient when set, else the passphrase, else nothing (uploads fail). */
export function ageKeyOf(config: Config): AgeKey | undefined {
  if (config.offsite.ageRecipient) return { recipient: config.offsite.ageRecipient };
  if (config.offsite.passphrase) return { passphrase: config.offsite.passphrase, logN: config.offsite.scryptWorkFactor };
  return undefined;
}
