// Pure decision of the node reconciler (DESIGN.md rule 5): a node's latest change is applied once, when the
// generation asked for is newer than the one settled; never again after (Swarm holds the node's state, and
// a change made there by hand since is not svc's to undo).
import type { NodeChange } from '../../runtime/runtime.js';
import type { NodeSpecRow, NodeSpecStatusRow } from '../../store/schema/index.js';

/** The change to send to Swarm, or undefined when there is nothing to do. */
export function dueNodeChange(spec: NodeSpecRow | undefined, settled: Pick<NodeSpecStatusRow, 'generation'> | undefined): NodeChange | undefined {
  if (!spec || (settled && settled.generation >= spec.generation)) return undefined;
  const change: NodeChange = {};
  if (spec.availability) change.availability = spec.availability;
  if (spec.labels) change.labels = spec.labels;
  return change;
}
