// When to look at the nodes' states (node-events.ts): the queue key `nodes:events`, added at every
// (re)connection of the event stream (the daemon's start included) and at every node event the Swarm
// watcher reports (down, up, joined, left). The work queue is the coalescer: looks never overlap, and a
// burst of node events during one costs one more look after it.
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { Bus } from '../events/bus.js';
import type { Runtime } from '../runtime/runtime.js';
import { keyOf, type Reconciler } from '../controller/types.js';
import { recordNodeStates } from './node-events.js';

/** The key node events add (the manager's `onNodesChanged`). */
export const NODES_KEY = keyOf('nodes', 'events');

/**
 * The reconciler of `nodes:events`: one look at the nodes, stored and announced. An engine error is logged
 * and waits for the next node event or reconnection (as before: no retry of its own). Not resynced: a look
 * follows the events, and every reconnection of the stream.
 */
export function createNodeWatch(d: { db: Db; bus: Bus; runtime: Pick<Runtime, 'nodes'>; log: Logger; now?: () => number }): Reconciler {
  return {
    kind: 'nodes',
    listNames: () => [],
    async reconcile() {
      try {
        const found = recordNodeStates(d, await d.runtime.nodes(), (d.now ?? Date.now)());
        for (const t of found) d.log[t.kind === 'down' ? 'warn' : 'info'](t.kind === 'down' ? 'node down' : 'node up again', { node: t.node.hostname, id: t.node.id, state: t.node.state });
      } catch (err) {
        d.log.warn('looking at the nodes failed', { error: (err as Error).message });
      }
      return {};
    },
  };
}
