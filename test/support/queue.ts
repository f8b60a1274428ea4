// A real work queue (src/controller/workqueue.ts) in front of a few reconcilers, on a fake clock: what the
// manager does for the daemon, without the engine's event stream, for tests of queue-driven housekeeping.
import { createWorkQueue, type WorkQueue } from '../../src/controller/workqueue.js';
import { parseKey, type Key, type Reconciler } from '../../src/controller/types.js';
import type { FakeClock } from './fake-clock.js';

/** The queue, and `start()` which adds every name of every reconciler as the manager's start does. */
export function queueOf(clock: FakeClock, ...reconcilers: Reconciler[]): WorkQueue & { start(): Promise<void>; passes: Key[] } {
  const passes: Key[] = [];
  const byKind = new Map(reconcilers.map((r) => [r.kind, r]));
  const q = createWorkQueue({
    clock,
    handler: async (key, signal) => {
      passes.push(key);
      const { kind, name } = parseKey(key);
      return (await byKind.get(kind)?.reconcile(name, { signal })) ?? {};
    },
  });
  return {
    ...q,
    passes,
    async start() {
      for (const r of reconcilers) for (const name of await r.listNames()) q.add(`${r.kind}:${name}`);
    },
  };
}
