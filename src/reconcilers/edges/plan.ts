// What makes the edge nodes' services match the nodes' `svc.edge` labels (the `edges:main` reconciler's
// decision), pure and table-tested.
import { EDGE_NODE_OF, EDGE_ROLES, EDGE_SERVICES, EDGE_SPEC_LABEL, isEdgeNode, type EdgePlanNode, type EdgePlanService, type EdgeService } from '../../runtime/swarm-edge-spec.js';
import { outOfDate, servicesByKey, unwanted } from '../swarm-plan.js';

export interface EdgePlan {
  create: { node: EdgePlanNode; part: EdgeService }[];
  update: { node: EdgePlanNode; part: EdgeService; service: EdgePlanService }[];
  remove: EdgePlanService[];
  /** Boot secrets no wanted spec names (removed once no service uses them). */
  removeSecrets: string[];
  /** Nodes whose label is not understood, and why. */
  skipped: { node: EdgePlanNode; reason: string }[];
}

const partOf = (s: EdgePlanService): EdgeService | undefined => EDGE_SERVICES.find((p) => s.labels['svc.role'] === EDGE_ROLES[p]);

/**
 * Pure: what makes the edge services match the labels: the three parts on every node labelled `svc.edge=true`
 * other than the one svc runs on (the manager is an edge anyway, with its own Caddy and relay), whatever its
 * state (a node that comes back serves at once); none elsewhere (label removed, node left). A service whose
 * spec hash differs, or scaled by hand, is updated; a second one for the same node and part goes.
 */
export function planEdges(i: {
  selfId: string;
  nodes: EdgePlanNode[];
  services: EdgePlanService[];
  secrets: string[];
  wantedSecrets: string[];
  wantedHash: (node: EdgePlanNode, part: EdgeService) => string;
}): EdgePlan {
  const plan: EdgePlan = { create: [], update: [], remove: [], removeSecrets: [], skipped: [] };
  // A service of no part or node, or a second for the same node and part, goes.
  const { byKey: found, extras } = servicesByKey(i.services, (s) => {
    const part = partOf(s);
    return part && s.labels[EDGE_NODE_OF] ? `${s.labels[EDGE_NODE_OF]}/${part}` : undefined;
  });
  plan.remove.push(...extras);
  const wanted = new Set<string>();
  for (const node of i.nodes) {
    if (node.id === i.selfId) continue;
    let edge: boolean;
    try {
      edge = isEdgeNode(node.labels);
    } catch (err) {
      plan.skipped.push({ node, reason: (err as Error).message });
      // Not understood: what runs there stays as it is (a typo must not take an edge down).
      for (const part of EDGE_SERVICES) if (found.has(`${node.id}/${part}`)) wanted.add(`${node.id}/${part}`);
      continue;
    }
    if (!edge) continue;
    for (const part of EDGE_SERVICES) {
      const key = `${node.id}/${part}`;
      wanted.add(key);
      const s = found.get(key);
      if (!s) plan.create.push({ node, part });
      else if (outOfDate(s, EDGE_SPEC_LABEL, i.wantedHash(node, part))) plan.update.push({ node, part, service: s });
    }
  }
  plan.remove.push(...unwanted(found, wanted));
  plan.removeSecrets = i.secrets.filter((s) => !i.wantedSecrets.includes(s)).sort();
  return plan;
}
