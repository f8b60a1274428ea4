// The edge nodes of a Swarm as one key, `edges:main` (docs/decisions/0043-edge-nodes.md): each pass compares
// the nodes' `svc.edge` labels with the edge services and makes them match (src/runtime/swarm-edges.ts, planned
// by the pure swarm-edge-spec.ts), as `agents:main` does for the agents. Node events enqueue it (a label change
// included); the work queue gives the start's pass, coalescing, backoff on an engine error, and a look every
// 30 s for what no event announces (a service removed or scaled by hand).
import type { Reconciler } from '../../controller/types.js';

export const EDGES_RESYNC_MS = 30_000;

/**
 * `passed`: told after every pass (the proxy then asks for the edge nodes again): node events enqueue this key,
 * so a node just reported down stops being asked at once (a switch would otherwise wait for it once, up to
 * 2 s, until the proxy's own list of edge nodes, kept 5 s, is read again).
 */
export function createEdgesReconciler(edges: { reconcile(): Promise<{ changed: boolean }> }, passed?: () => void): Reconciler {
  return {
    kind: 'edges',
    listNames: () => ['main'],
    async reconcile() {
      await edges.reconcile();
      passed?.();
      return { requeueAfterMs: EDGES_RESYNC_MS };
    },
  };
}
