// The node reconciler played as the work queue would: run when a request enqueues `node:<ref>`, waking the
// request through the same bus. For API and UI tests of PUT /api/nodes/{id} and the Nodes page's buttons.
import type { Key } from '../../src/controller/types.js';
import { Bus } from '../../src/controller/bus.js';
import { silentLogger } from '../../src/log.js';
import { createNodeReconciler } from '../../src/reconcilers/nodes/reconciler.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { Db } from '../../src/store/db.js';

export function playNodeReconciler(runtime: Runtime) {
  const bus = new Bus();
  const applied: Key[] = [];
  let rec: ReturnType<typeof createNodeReconciler> | undefined;
  return {
    bus,
    /** The keys the reconciler ran for, in order. */
    applied,
    onEnqueue: (key: Key) => {
      if (key.startsWith('node:')) void rec?.reconcile(key.slice('node:'.length)).then(() => applied.push(key));
    },
    /** Binds the reconciler to the test API's database (made after the options). */
    attach(db: Db) {
      rec = createNodeReconciler({ db, runtime, bus, log: silentLogger });
    },
  };
}
