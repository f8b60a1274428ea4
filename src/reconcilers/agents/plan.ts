// What makes the node agents match the nodes (the `agents:main` reconciler's decision), pure and table-tested.
import { AGENT_NODE_LABEL, AGENT_SPEC_LABEL, engineSocketOf, type PlanNode, type PlanService } from '../../runtime/swarm-agent-spec.js';

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
  const byNode = new Map<string, PlanService>();
  for (const s of i.services) {
    const node = s.labels[AGENT_NODE_LABEL];
    // Two agents for one node (never made by svc): the second goes.
    if (!node || byNode.has(node)) plan.remove.push(s);
    else byNode.set(node, s);
  }
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
    else if (found.labels[AGENT_SPEC_LABEL] !== i.wantedHash(node, socket) || (found.replicas ?? 1) !== 1) plan.update.push({ node, socket, service: found });
  }
  for (const [node, s] of byNode) if (!wanted.has(node)) plan.remove.push(s);
  plan.removeSecrets = i.secrets.filter((s) => s !== i.wantedSecret).sort();
  return plan;
}
