// The backup aggregate's two persisted operations, each its own kind so one key names one row:
// `restore:<id>` drives a `restores` row through its phases (src/backup/restore.ts) and `import:<id>`
// checks an uploaded archive (src/backup/import.ts). Neither sits behind the restore gate: a restore is
// what closes it. Both names lists are the unfinished rows, so a resync after a restart picks them up.
import type { Reconciler, Result } from '../../controller/types.js';
import type { Db } from '../../store/db.js';
import { activeRestores, importsIn } from '../../store/backup-ops.js';

const ID = /^[1-9][0-9]*$/;

export function createRestoreReconciler(d: { db: Db; step(id: number): Promise<Result> }): Reconciler {
  return {
    kind: 'restore',
    listNames: () => activeRestores(d.db).map((r) => String(r.id)),
    reconcile: (name) => (ID.test(name) ? d.step(Number(name)) : Promise.resolve({})),
  };
}

export function createImportReconciler(d: { db: Db; check(id: number): Promise<Result> }): Reconciler {
  return {
    kind: 'import',
    listNames: () => importsIn(d.db, ['checking']).map((r) => String(r.id)),
    reconcile: (name) => (ID.test(name) ? d.check(Number(name)) : Promise.resolve({})),
  };
}
