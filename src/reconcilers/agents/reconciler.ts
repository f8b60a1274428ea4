// The node agents of a Swarm as one key, `agents:main` (docs/decisions/0041-node-agents.md): one Caddy service per
// node other than the manager, passing svc's exec and archive calls to that node's engine
// (src/runtime/swarm-agents.ts reaches them). Each pass observes the nodes, the agent services and their secrets,
// plans with the pure plan.ts and acts through the SwarmObjects port (swarm-apply.ts). The work queue gives the
// start's pass, one pass at a time with asks in between coalesced (node events enqueue the key), backoff on an
// engine error, and a look every 30 s for what no event announces (an agent removed or scaled by hand).
import type { Reconciler } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import { agentReachesEdge } from '../../runtime/swarm-agents.js';
import { AGENT_ROLE, AGENT_SPEC_LABEL, agentSecret, agentServiceSpec, type PlanNode } from '../../runtime/swarm-agent-spec.js';
import type { SwarmObjects } from '../../runtime/swarm-objects.js';
import { applySwarmSteps } from '../swarm-apply.js';
import { planAgents } from './plan.js';

export const AGENTS_RESYNC_MS = 30_000;

export interface AgentsOptions {
  swarm: SwarmObjects;
  instance: string;
  /** The instance's overlay (SVC_NETWORK): the agents listen on it, the relay reaches them there. */
  network: string;
  /** SVC_PROXY_IMAGE: any Caddy 2 with /usr/bin/caddy (the relay's image). */
  image: string;
  /** Hex of the agents' key (32 bytes derived from the sealing key); it is never logged. */
  key: string;
  log: Logger;
}

export function createAgentsReconciler(o: AgentsOptions): Reconciler {
  const secret = agentSecret(o.instance, o.key);
  const ours = [`svc.managed=true`, `svc.instance=${o.instance}`, `svc.role=${AGENT_ROLE}`];
  const labels = Object.fromEntries(ours.map((l) => l.split('=') as [string, string]));
  const specFor = (node: PlanNode, socket: string, secretId: string) =>
    agentServiceSpec({ instance: o.instance, network: o.network, image: o.image, nodeId: node.id, socket, secret: { id: secretId, name: secret.name }, edge: agentReachesEdge(node.labels) });
  const idOf = (ids: ReadonlyMap<string, string>) => ids.get(secret.name) ?? '';

  return {
    kind: 'agents',
    listNames: () => ['main'],
    async reconcile() {
      const [nodes, services, secrets, selfId] = await Promise.all([o.swarm.nodes(), o.swarm.services(ours), o.swarm.secrets(ours), o.swarm.selfNodeId()]);
      const plan = planAgents({
        selfId,
        nodes,
        services,
        secrets: secrets.map((s) => s.name),
        wantedSecret: secret.name,
        // The hash does not depend on the secret's id (the name holds the config's hash).
        wantedHash: (node, socket) => specFor(node, socket, '').Labels[AGENT_SPEC_LABEL]!,
      });
      for (const s of plan.skipped) o.log.warn('no agent for this node', { node: s.node.hostname ?? s.node.id, reason: s.reason });
      await applySwarmSteps(o.swarm, o.log, 'node agent', {
        wantedSecrets: [{ ...secret, labels }],
        secrets,
        create: plan.create.map((c) => ({ node: c.node.hostname ?? c.node.id, image: o.image, spec: (ids) => specFor(c.node, c.socket, idOf(ids)) })),
        update: plan.update.map((u) => ({ node: u.node.hostname ?? u.node.id, image: o.image, service: u.service, spec: (ids) => specFor(u.node, u.socket, idOf(ids)) })),
        remove: plan.remove,
        removeSecrets: plan.removeSecrets,
      });
      return { requeueAfterMs: AGENTS_RESYNC_MS };
    },
  };
}
