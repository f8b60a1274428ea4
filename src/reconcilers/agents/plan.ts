// What makes the node agents match the nodes (the `agents:main` reconciler's decision), pure and table-tested.
import { AGENT_NODE_LABEL, AGENT_SPEC_LABEL, engineSocketOf, type PlanNode, type PlanService } from '../../runtime/swarm-agent-spec.js';
import { outOfDate, servicesByKey, unwanted } from '../swarm-plan.js';

export interface AgentPlan {
  create: { node: PlanNode; socket: string }[];
  update: { node: PlanNode; socket: string; service: PlanService }[];
  remove: PlanService[];
  /** Secrets of the agents that the wanted config no longer names (removed once no service uses them). */
  removeSecrets: string[];
  /** Nodes that get no agent, and why (a bad label). */
  skipped: { node: PlanNode; reason: string }[];
}

/**
 * Pure: what makes the agents match the nodes: one per node other than the manager svc runs on (ready or
 * not: a node that comes back has its agent at once), none for nodes that left; an agent whose spec hash
 * differs, or that was scaled by hand, is updated. `wantedHash(node, socket)` is the hash the node's agent should carry.
 */
export function planAgents(i: {
  selfId: string;
  nodes: PlanNode[];
  services: PlanService[];
  secrets: string[];
  wantedSecret: string;
  wantedHash: (node: PlanNode, socket: string) => string;
}): AgentPlan {
  const plan: AgentPlan = { create: [], update: [], remove: [], removeSecrets: [], skipped: [] };
  // Two agents for one node (never made by svc): the second goes.
  const { byKey: byNode, extras } = servicesByKey(i.services, (s) => s.labels[AGENT_NODE_LABEL] || undefined);
  plan.remove.push(...extras);
  const wanted = new Set<string>();
  for (const node of i.nodes) {
    if (node.id === i.selfId) continue;
    let socket: string;
    try {
      socket = engineSocketOf(node.labels);
    } catch (err) {
      plan.skipped.push({ node, reason: (err as Error).message });
      continue;
    }
    wanted.add(node.id);
    const found = byNode.get(node.id);
    if (!found) plan.create.push({ node, socket });
    else if (outOfDate(found, AGENT_SPEC_LABEL, i.wantedHash(node, socket))) plan.update.push({ node, socket, service: found });
  }
  plan.remove.push(...unwanted(byNode, wanted));
  plan.removeSecrets = i.secrets.filter((s) => s !== i.wantedSecret).sort();
  return plan;
}
