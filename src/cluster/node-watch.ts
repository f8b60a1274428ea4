// When to look at the nodes' states (node-events.ts): at every (re)connection of the event stream (the
// daemon's start included) and at every node event the Swarm watcher reports (down, up, joined, left).
// Looks never overlap: a request during one runs once after it.
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { Runtime } from '../runtime/runtime.js';
import { recordNodeStates } from './node-events.js';
import { coalesced } from '../coalesce.js';

export interface NodeWatch {
  /** Asks for a look (coalesced); the returned promise ends when it is done. Never rejects. */
  check(): Promise<void>;
  /** No look after this; waits for the one running. */
  stop(): Promise<void>;
}

export function createNodeWatch(d: { db: Db; runtime: Pick<Runtime, 'nodes'>; log: Logger; now?: () => number }): NodeWatch {
  let stopped = false;
  const look = async () => {
    try {
      const found = recordNodeStates(d.db, await d.runtime.nodes(), (d.now ?? Date.now)());
      for (const t of found) d.log[t.kind === 'down' ? 'warn' : 'info'](t.kind === 'down' ? 'node down' : 'node up again', { node: t.node.hostname, id: t.node.id, state: t.node.state });
    } catch (err) {
      d.log.warn('looking at the nodes failed', { error: (err as Error).message });
    }
  };
  const looks = coalesced(look, () => stopped);
  return {
    check: () => looks.run(),
    async stop() {
      stopped = true;
      await looks.current();
    },
  };
}
