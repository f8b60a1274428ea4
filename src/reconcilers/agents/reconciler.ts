// The node agents of a Swarm as one key, `agents:main` (docs/decisions/0041-node-agents.md): each pass
// compares the nodes with the agents and makes them match (src/runtime/swarm-agents.ts, planned by the pure
// swarm-agent-spec.ts). The work queue gives what the agents need: the start's pass, one pass at a time with
// asks in between coalesced (node events enqueue the key), backoff on an engine error, and a look every
// 30 s for what no event announces (an agent removed or scaled by hand).
import type { Reconciler } from '../../controller/types.js';

export const AGENTS_RESYNC_MS = 30_000;

export function createAgentsReconciler(agents: { reconcile(): Promise<void> }): Reconciler {
  return {
    kind: 'agents',
    listNames: () => ['main'],
    async reconcile() {
      await agents.reconcile();
      return { requeueAfterMs: AGENTS_RESYNC_MS };
    },
  };
}
