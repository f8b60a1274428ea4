// The machines svc runs apps on (issue 19 "Many hosts on Docker Swarm") as the API, the UI and the CLI
// show them, with the apps' replicas on each. Swarm holds this state, not svc's database: the Runtime port
// is asked. The commands on nodes (availability, labels, join) are src/desired/nodes.ts.
import type { Db } from '../store/db.js';
import { lastNodeEvents } from '../store/node-events.js';
import { LABELS, type NodeView, type Runtime } from '../runtime/runtime.js';

/** A node as GET /api/nodes answers it. */
export interface NodeJson {
  id: string;
  hostname: string;
  address: string;
  role: 'manager' | 'worker';
  leader: boolean;
  availability: string;
  state: string;
  labels: Record<string, string>;
  engine_version: string;
  cpus: number;
  memory_mb: number;
  /** This instance's app replicas and services running there. */
  replicas: { app?: string; service?: string; container: string }[];
  /** When svc saw the node go down, while it has not come back (node_events); else null. */
  down_since: string | null;
}

/** Pure: the node views joined with what runs where, managers first, then by host name. */
export function nodeList(
  nodes: NodeView[],
  placements: Map<string, { name: string; labels: Record<string, string> }[]>,
  lastEvents: Map<string, { kind: string; timestamp: string }> = new Map(),
): NodeJson[] {
  return [...nodes]
    .sort((a, b) => (a.role === b.role ? a.hostname.localeCompare(b.hostname) : a.role === 'manager' ? -1 : 1))
    .map((n) => ({
      id: n.id,
      hostname: n.hostname,
      address: n.address,
      role: n.role,
      leader: n.leader,
      availability: n.availability,
      state: n.state,
      labels: n.labels,
      engine_version: n.engineVersion,
      cpus: n.cpus,
      memory_mb: n.memoryMb,
      replicas: (placements.get(n.id) ?? [])
        .map((p) => ({ app: p.labels[LABELS.app], service: p.labels[LABELS.service], container: p.name }))
        .sort((a, b) => a.container.localeCompare(b.container)),
      down_since: lastEvents.get(n.id)?.kind === 'down' ? lastEvents.get(n.id)!.timestamp : null,
    }));
}

/** The nodes as GET /api/nodes answers; `db` adds when a node went down (absent: never). */
export async function listNodes(runtime: Runtime, db?: Db): Promise<NodeJson[]> {
  const [nodes, placements] = await Promise.all([runtime.nodes(), runtime.placements()]);
  return nodeList(nodes, placements, db ? lastNodeEvents(db) : undefined);
}
