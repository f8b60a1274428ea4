// The backup part of the composition root: settles records an earlier process left `running`, then
// registers the backup reconciler with the archive builder bound to this daemon's paths and engine.
import type { Config } from '../config.js';
import { systemClock } from '../controller/clock.js';
import type { Manager } from '../controller/manager.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { createBackupReconciler, type BackupReconciler } from '../reconcilers/backup/reconciler.js';
import { createArchive } from './create-archive.js';
import { recoverInterruptedBackups } from './recover.js';

export interface BackupWiring {
  reconciler: BackupReconciler;
}

/** Call before `manager.start()`: recovery must run before the first `backup:<id>` reconcile. */
export function wireBackups(d: { config: Config; db: Db; sealer: Sealer; log: Logger; runtime: Runtime; manager: Manager }): BackupWiring {
  const { config, db, sealer, log, runtime, manager } = d;
  recoverInterruptedBackups(db, config.backupDir, log);
  const archiveDeps = { db, sealer, runtime, log, dataDir: config.dataDir, backupDir: config.backupDir, effectiveEnv: config.effectiveEnv };
  const reconciler = createBackupReconciler({
    db,
    log,
    clock: systemClock,
    enqueue: manager.enqueue,
    backupDir: config.backupDir,
    settings: config.backup,
    build: (row) => createArchive(archiveDeps, row.filename),
  });
  manager.register(reconciler);
  return { reconciler };
}
