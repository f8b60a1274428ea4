// The backup part of the composition root: settles what an earlier process left half-done (a `running`
// record, work files, an interrupted restore), then registers the backup reconciler with the archive
// builder, the restore and the pending-dump loader bound to this daemon's paths, engine and gate.
import type { Config } from '../config.js';
import { systemClock } from '../controller/clock.js';
import type { Manager } from '../controller/manager.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { insertWithFreeName } from '../store/backups.js';
import { createBackupReconciler, type BackupReconciler } from '../reconcilers/backup/reconciler.js';
import { createRestoreQueue, type BackupControl } from './control.js';
import { createArchive } from './create-archive.js';
import { loadPendingDumps, pendingDumps } from './pending-dumps.js';
import type { Gate } from './quiesce.js';
import { recoverInterruptedBackups } from './recover.js';
import { recoverRestore, restoreOnline } from './restore.js';

export interface BackupWiring {
  reconciler: BackupReconciler;
  control: BackupControl;
}

/** Call before the API serves and before `manager.start()`: recovery must come first. */
export function wireBackups(d: { config: Config; db: Db; sealer: Sealer; log: Logger; runtime: Runtime; manager: Manager; gate: Gate }): BackupWiring {
  const { config, db, sealer, log, runtime, manager, gate } = d;
  recoverRestore(config.dataDir, log);
  recoverInterruptedBackups(db, config.backupDir, log);
  const archiveDeps = { db, sealer, runtime, log, dataDir: config.dataDir, backupDir: config.backupDir, effectiveEnv: config.effectiveEnv };
  const dumpDeps = { db, sealer, runtime, log, dataDir: config.dataDir };
  const restores = createRestoreQueue({
    db,
    enqueue: manager.enqueue,
    run: (row) =>
      restoreOnline(
        {
          db,
          sealer,
          runtime,
          log,
          dataDir: config.dataDir,
          backupDir: config.backupDir,
          instance: config.instance,
          gate,
          safetyBackup: () => reconciler.buildNow(insertWithFreeName(db, new Date(), { status: 'running', trigger: 'safety' })),
          resync: async () => {
            await manager.enqueueAll();
            manager.enqueue('backup:dumps');
          },
        },
        row,
      ),
  });
  // `restores` calls reconciler.buildNow only when a restore runs, long after both exist.
  const reconciler = createBackupReconciler({
    db,
    log,
    clock: systemClock,
    enqueue: manager.enqueue,
    backupDir: config.backupDir,
    settings: config.backup,
    build: (row) => createArchive(archiveDeps, row.filename),
    extraNames: () => [...restores.names(), ...(pendingDumps(config.dataDir).length ? ['dumps'] : [])],
    other: (name) => (name === 'dumps' ? loadPendingDumps(dumpDeps) : name.startsWith('restore-') ? restores.handle(name) : Promise.resolve({})),
  });
  manager.register(reconciler);
  return { reconciler, control: restores };
}
