// The JSON shape of a node event as GET /api/nodes/events answers it.
import type { NodeEventRow } from '../store/node-events.js';

export function nodeEventJson(r: NodeEventRow) {
  return { id: r.id, node_id: r.nodeId, hostname: r.hostname, kind: r.kind, state: r.state, at: r.timestamp };
}
