// A Swarm node that goes down is an event (issue 19 section 2, issue 21 "a node down"): stored in
// node_events (shown on the Nodes page and by GET /api/nodes/events) and raised as the notification
// `node_down`, then `node_recovered` when it is ready again, through the storm rule (one alert per node per
// 15 minutes, one recovery). Level-based, not edge-based: each look compares the nodes' states now with the
// last event stored per node, so a node lost while the daemon was down is still recorded at the next start,
// and the watcher's repeated or missed `node_down` events can neither duplicate nor lose one.
import { insertNodeEvent, lastNodeEvents, type NodeEventRow } from '../store/node-events.js';
import { raise, type NoticeTarget } from '../notify/raise.js';
import type { NodeView } from '../runtime/runtime.js';

/**
 * States that mean a node is lost. `unknown` is not one: a node that has just joined reports it for a
 * moment before `ready`.
 */
const DOWN_STATES = new Set(['down', 'disconnected']);

export interface NodeTransition {
  node: Pick<NodeView, 'id' | 'hostname' | 'state'>;
  kind: 'down' | 'up';
}

/** Pure: the events that the nodes' states now make, given the last stored event of each node. */
export function nodeTransitions(last: Map<string, Pick<NodeEventRow, 'kind'>>, nodes: Pick<NodeView, 'id' | 'hostname' | 'state'>[]): NodeTransition[] {
  const out: NodeTransition[] = [];
  for (const n of nodes) {
    const wasDown = last.get(n.id)?.kind === 'down';
    if (DOWN_STATES.has(n.state) && !wasDown) out.push({ node: n, kind: 'down' });
    else if (n.state === 'ready' && wasDown) out.push({ node: n, kind: 'up' });
  }
  return out;
}

/** Stores and announces the transitions of `nodes` (raise() wakes the dispatcher); returns them. */
export function recordNodeStates(to: NoticeTarget, nodes: Pick<NodeView, 'id' | 'hostname' | 'state'>[], nowMs = Date.now()): NodeTransition[] {
  const { db } = to;
  return db.transaction(() => {
    const found = nodeTransitions(lastNodeEvents(db), nodes);
    const at = new Date(nowMs).toISOString();
    for (const t of found) {
      insertNodeEvent(db, { nodeId: t.node.id, hostname: t.node.hostname, kind: t.kind, state: t.node.state, timestamp: at });
      const down = t.kind === 'down';
      raise(
        to,
        {
          event: down ? 'node_down' : 'node_recovered',
          subject: down ? `node ${t.node.hostname} is ${t.node.state}` : `node ${t.node.hostname} is ready again`,
          message: down
            ? `The Swarm manager lost node ${t.node.hostname} (${t.node.id}). svc starts the app replicas that ran there on the other nodes; a managed service or an app with volumes pinned to it waits for it.`
            : `Node ${t.node.hostname} (${t.node.id}) is ready again. Swarm places new replicas on it; running ones stay where they are.`,
          link: '/nodes',
          storm: { key: `node:${t.node.id}`, signal: down ? 'fire' : 'resolve' },
        },
        nowMs,
      );
    }
    return found;
  });
}

