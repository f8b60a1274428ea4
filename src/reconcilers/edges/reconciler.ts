// The edge nodes of a Swarm as one key, `edges:main` (docs/decisions/0043-edge-nodes.md): for every node labelled
// `svc.edge=true`, a Caddy on its host network, a relay and its resolver on the overlay, Swarm services pinned
// there. Each pass observes the nodes, the edge services and their boot secrets, plans with the pure plan.ts and
// acts through the SwarmObjects port (swarm-apply.ts), as `agents:main` does for the agents. Node events enqueue
// it (a label change included); the work queue gives the start's pass, coalescing, backoff on an engine error, and
// a look every 30 s for what no event announces (a service removed or scaled by hand).
import type { Reconciler } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import { EDGE_PARTS, EDGE_ROLES, EDGE_SERVICES, EDGE_SPEC_LABEL, edgeBootSecret, edgeResolverSpec, edgeServiceSpec, type EdgePart, type EdgeService } from '../../runtime/swarm-edge-spec.js';
import type { SwarmObjects } from '../../runtime/swarm-objects.js';
import { applySwarmSteps } from '../swarm-apply.js';
import { planEdges } from './plan.js';

export const EDGES_RESYNC_MS = 30_000;

export interface EdgesOptions {
  swarm: SwarmObjects;
  instance: string;
  network: string;
  /** SVC_PROXY_IMAGE (what the relay and the agents run). */
  image: string;
  /** The resolver's image (dnsmasq): SVC_RESOLVER_IMAGE or svc's own (src/runtime/resolver-image.ts); a failure fails the pass. */
  resolverImage: () => Promise<string>;
  log: Logger;
  /**
   * Told after every pass (the proxy then asks for the edge nodes again): node events enqueue this key, so a
   * node just reported down stops being asked at once (a switch would otherwise wait for it once, up to 2 s,
   * until the proxy's own list of edge nodes, kept 5 s, is read again).
   */
  passed?: () => void;
}

export function createEdgesReconciler(o: EdgesOptions): Reconciler {
  const ours = [`svc.managed=true`, `svc.instance=${o.instance}`];
  const secretLabels = { 'svc.managed': 'true', 'svc.instance': o.instance, 'svc.role': 'edge' };
  const wanted = Object.fromEntries(EDGE_PARTS.map((p) => [p, edgeBootSecret(o.instance, p)])) as Record<EdgePart, { name: string; data: string }>;
  const specFor = (resolverImage: string, nodeId: string, part: EdgeService, ids: ReadonlyMap<string, string>) =>
    part === 'dns'
      ? edgeResolverSpec({ instance: o.instance, network: o.network, image: resolverImage, nodeId })
      : edgeServiceSpec({ instance: o.instance, network: o.network, image: o.image, nodeId, part, secret: { id: ids.get(wanted[part].name) ?? '', name: wanted[part].name } });
  // `edge-` also takes in the services of the pair of before (`edge-relay-b`, `edge-swap`): of no part, they go.
  const isEdgeRole = (labels: Record<string, string>) => labels['svc.role']?.startsWith('edge-') ?? false;

  return {
    kind: 'edges',
    listNames: () => ['main'],
    async reconcile() {
      const [nodes, all, secrets, selfId, resolverImage] = await Promise.all([o.swarm.nodes(), o.swarm.services(ours), o.swarm.secrets([...ours, 'svc.role=edge']), o.swarm.selfNodeId(), o.resolverImage()]);
      const imageOf = (part: EdgeService) => (part === 'dns' ? resolverImage : o.image);
      const services = all.filter((s) => isEdgeRole(s.labels));
      const plan = planEdges({
        selfId,
        nodes,
        services,
        secrets: secrets.map((s) => s.name),
        wantedSecrets: EDGE_PARTS.map((p) => wanted[p].name),
        wantedHash: (node, part) => specFor(resolverImage, node.id, part, new Map()).Labels[EDGE_SPEC_LABEL]!,
      });
      for (const s of plan.skipped) o.log.warn('edge label not understood; the node is left as it is', { node: s.node.hostname ?? s.node.id, reason: s.reason });
      await applySwarmSteps(o.swarm, o.log, 'edge node service', {
        wantedSecrets: EDGE_PARTS.map((p) => ({ ...wanted[p], labels: secretLabels })),
        secrets,
        create: plan.create.map((c) => ({ node: c.node.hostname ?? c.node.id, image: imageOf(c.part), spec: (ids) => specFor(resolverImage, c.node.id, c.part, ids) })),
        update: plan.update.map((u) => ({ node: u.node.hostname ?? u.node.id, image: imageOf(u.part), service: u.service, spec: (ids) => specFor(resolverImage, u.node.id, u.part, ids) })),
        remove: plan.remove,
        removeSecrets: plan.removeSecrets,
      });
      o.passed?.();
      return { requeueAfterMs: EDGES_RESYNC_MS };
    },
  };
}
