// The node reconciler (`node:<ref>`): applies the latest change a user asked of a Swarm node (availability,
// labels; src/store/node-specs.ts) through the Runtime port, records the outcome (src/observed/nodes.ts) and
// wakes the request that waits for it (Bus event `node`). A refusal (or an engine that failed) is recorded
// with its code and not retried: the request answers it, as it did when it called Swarm itself.
import type { Reconciler, Result } from '../../controller/types.js';
import type { Bus } from '../../controller/bus.js';
import type { Logger } from '../../log.js';
import { observeNodeOutcome } from '../../observed/nodes.js';
import { NoSuchNodeError, NotASwarmError, type Runtime } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import { nodeSpecOf, nodeSpecStatusOf, unsettledNodeSpecs } from '../../store/node-specs.js';
import { dueNodeChange } from './plan.js';

/** How the engine's refusal reads as an API.md code; undefined for a failure worth retrying. */
export function refusalOf(err: unknown): { code: string; error: string } | undefined {
  if (err instanceof NotASwarmError) return { code: 'not_a_swarm', error: err.message };
  if (err instanceof NoSuchNodeError) return { code: 'not_found', error: 'node not found' };
  if (err instanceof Error && /update out of sequence/i.test(err.message)) return { code: 'conflict', error: 'the node changed meanwhile; try again' };
  return undefined;
}

export function createNodeReconciler(d: { db: Db; runtime: Runtime; bus: Bus; log: Logger }): Reconciler {
  async function reconcile(ref: string): Promise<Result> {
    const spec = nodeSpecOf(d.db, ref);
    const change = dueNodeChange(spec, nodeSpecStatusOf(d.db, ref));
    if (!spec || !change) return {};
    let refusal: { code: string; error: string } | null = null;
    try {
      await d.runtime.updateNode(ref, change);
      d.log.info('node changed', { node: ref, ...(change.availability ? { availability: change.availability } : {}), ...(change.labels ? { labels: Object.keys(change.labels).length } : {}) });
    } catch (err) {
      refusal = refusalOf(err) ?? { code: 'engine_error', error: err instanceof Error ? err.message : String(err) };
      d.log.warn('node change refused', { node: ref, code: refusal.code, error: refusal.error });
    }
    observeNodeOutcome(d.db, ref, spec.generation, refusal);
    d.bus.emit('node', ref);
    return {};
  }
  return { kind: 'node', reconcile, listNames: async () => unsettledNodeSpecs(d.db) };
}
