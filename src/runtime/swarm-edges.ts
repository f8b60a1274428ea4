// Edge nodes of a Swarm (docs/decisions/0043-edge-nodes.md): for every node labelled `svc.edge=true`, a
// Caddy on its host network and two relays on the overlay, three Swarm services pinned there (planned by the pure
// swarm-edge-spec.ts). `reconcile` makes them match the labels; `targets` says which edge nodes there are and
// how the daemon reaches their admin APIs (the task address of the node's agent), for src/proxy/edge-nodes.ts.
import type Docker from 'dockerode';
import type { Logger } from '../log.js';
import { call } from './docker-errors.js';
import type { RegistryAuthLookup } from './runtime.js';
import { addressOn, currentTask, type NodeDoc, type TaskDoc } from './swarm-map.js';
import { AGENT_NODE_LABEL, AGENT_PORT, AGENT_ROLE } from './swarm-agent-spec.js';
import { EDGE_NODE_OF, EDGE_PARTS, EDGE_ROLES, EDGE_SERVICES, EDGE_SPEC_LABEL, edgeBootSecret, edgeServiceSpec, edgeSwapperSpec, planEdges, type EdgePart, type EdgeService } from './swarm-edge-spec.js';

export interface EdgeNodesOptions {
  /** The manager's engine (Swarm API). */
  docker: Docker;
  instance: string;
  network: string;
  /** SVC_PROXY_IMAGE (what the relay and the agents run). */
  image: string;
  /** SVC_PROBE_IMAGE (busybox): the swapper's image. */
  probeImage: string;
  selfNodeId: () => Promise<string>;
  ensureNetwork: () => Promise<void>;
  registryAuth?: RegistryAuthLookup;
  log: Logger;
}

/** An edge node as the proxy sees it: where to send its admin calls (its agent), or why it cannot be reached now. */
export interface EdgeTarget {
  nodeId: string;
  hostname: string;
  /** `<agent task address>:2380` when the node is ready and its agent runs. */
  agent?: string;
  /** The agent's container (it mounts the edge volume: the relay link is read through it). */
  container?: string;
  /** The node's swapper container (the link is renamed there), when it runs. */
  swapper?: string;
  /** Why not (node down, agent not running). */
  why?: string;
}

export interface EdgeNodes {
  /** Makes the edge services match the labels now; rejects on an engine error (the `edges:main` pass retries). */
  reconcile(): Promise<{ changed: boolean }>;
  /** The edge nodes (those with an edge proxy service of this instance) and how to reach them. */
  targets(): Promise<EdgeTarget[]>;
}

interface ServiceLs {
  ID: string;
  Spec: { Name: string; Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } };
}

export function createEdgeNodes(o: EdgeNodesOptions): EdgeNodes {
  const d = o.docker;
  const ours = [`svc.managed=true`, `svc.instance=${o.instance}`];
  const secretsWanted = Object.fromEntries(EDGE_PARTS.map((p) => [p, edgeBootSecret(o.instance, p)])) as Record<EdgePart, { name: string; data: string }>;
  const specFor = (nodeId: string, part: EdgeService, secretId: string) =>
    part === 'swap'
      ? edgeSwapperSpec({ instance: o.instance, network: o.network, probeImage: o.probeImage, nodeId })
      : edgeServiceSpec({ instance: o.instance, network: o.network, image: o.image, nodeId, part, secret: { id: secretId, name: secretsWanted[part].name } });
  const isEdgeRole = (s: ServiceLs) => EDGE_SERVICES.some((p) => s.Spec.Labels?.['svc.role'] === EDGE_ROLES[p]);

  return {
    async reconcile() {
      const nodes = ((await call('node ls', () => d.listNodes())) ?? []) as NodeDoc[];
      const services = (((await call('service ls', () => d.listServices({ filters: { label: ours } }))) ?? []) as unknown as ServiceLs[]).filter(isEdgeRole);
      const secretFilter = JSON.stringify({ label: [...ours, 'svc.role=edge'] });
      const secrets = ((await call('secret ls', () => d.listSecrets({ filters: secretFilter } as never) as unknown as Promise<unknown>)) ?? []) as unknown as { ID: string; Spec: { Name: string } }[];
      const plan = planEdges({
        selfId: await o.selfNodeId(),
        nodes: nodes.map((n) => ({ id: n.ID, hostname: n.Description?.Hostname, labels: n.Spec?.Labels ?? {} })),
        services: services.map((s) => ({ id: s.ID, name: s.Spec.Name, labels: s.Spec.Labels ?? {}, replicas: s.Spec.Mode?.Replicated?.Replicas })),
        secrets: secrets.map((s) => s.Spec.Name),
        wantedSecrets: EDGE_PARTS.map((p) => secretsWanted[p].name),
        wantedHash: (node, part) => specFor(node.id, part, '').Labels[EDGE_SPEC_LABEL]!,
      });
      for (const s of plan.skipped) o.log.warn('edge label not understood; the node is left as it is', { node: s.node.hostname ?? s.node.id, reason: s.reason });
      const ids: Partial<Record<EdgePart, string>> = {};
      for (const part of EDGE_PARTS) ids[part] = secrets.find((s) => s.Spec.Name === secretsWanted[part].name)?.ID;
      if (plan.create.length + plan.update.length > 0) {
        await o.ensureNetwork();
        for (const part of EDGE_PARTS) {
          if (ids[part]) continue;
          const labels = { 'svc.managed': 'true', 'svc.instance': o.instance, 'svc.role': 'edge' };
          const made = await call(`secret create ${secretsWanted[part].name}`, () => d.createSecret({ Name: secretsWanted[part].name, Labels: labels, Data: Buffer.from(secretsWanted[part].data).toString('base64') } as never));
          ids[part] = (made as unknown as { id: string }).id;
        }
      }
      const auth = o.registryAuth?.(o.image);
      const probeAuth = o.registryAuth?.(o.probeImage);
      for (const c of plan.create) {
        const spec = specFor(c.node.id, c.part, c.part === 'swap' ? '' : ids[c.part]!);
        const a = c.part === 'swap' ? probeAuth : auth;
        await call(`service create ${spec.Name}`, () => (a ? d.createService(a as never, spec as never) : d.createService(spec as never)) as Promise<unknown>);
        o.log.info('edge node service created', { node: c.node.hostname ?? c.node.id, service: spec.Name });
      }
      for (const u of plan.update) {
        const spec = specFor(u.node.id, u.part, u.part === 'swap' ? '' : ids[u.part]!);
        const doc = (await call(`service inspect ${u.service.name}`, () => d.getService(u.service.id).inspect(), [404])) as { Version: { Index: number } } | undefined;
        if (!doc) continue;
        const body = { ...spec, version: doc.Version.Index } as never;
        const a = u.part === 'swap' ? probeAuth : auth;
        await call(`service update ${u.service.name}`, () => (a ? d.getService(u.service.id).update(a as never, body) : d.getService(u.service.id).update(body)) as Promise<unknown>);
        o.log.info('edge node service updated', { node: u.node.hostname ?? u.node.id, service: u.service.name });
      }
      for (const s of plan.remove) {
        await call(`service rm ${s.name}`, () => d.getService(s.id).remove(), [404]);
        o.log.info('edge node service removed', { service: s.name });
      }
      for (const name of plan.removeSecrets) {
        const s = secrets.find((x) => x.Spec.Name === name)!;
        // Swarm refuses while a service names it: the next pass tries again.
        await call(`secret rm ${name}`, () => d.getSecret(s.ID).remove(), [404]).catch((err: Error) => o.log.debug('edge secret not removed yet', { secret: name, error: err.message }));
      }
      return { changed: plan.create.length + plan.update.length + plan.remove.length > 0 };
    },

    async targets() {
      const services = ((await call('service ls', () => d.listServices({ filters: { label: ours } }))) ?? []) as unknown as ServiceLs[];
      const edgeNodes = [...new Set(services.filter((s) => s.Spec.Labels?.['svc.role'] === EDGE_ROLES.proxy).map((s) => s.Spec.Labels?.[EDGE_NODE_OF] ?? ''))].filter(Boolean).sort();
      if (edgeNodes.length === 0) return [];
      const agents = new Map(services.filter((s) => s.Spec.Labels?.['svc.role'] === AGENT_ROLE).map((s) => [s.Spec.Labels?.[AGENT_NODE_LABEL] ?? '', s.ID]));
      const swappers = new Map(services.filter((s) => s.Spec.Labels?.['svc.role'] === EDGE_ROLES.swap).map((s) => [s.Spec.Labels?.[EDGE_NODE_OF] ?? '', s.ID]));
      const [nodes, tasks] = await Promise.all([
        call('node ls', () => d.listNodes()).then((x) => (x ?? []) as NodeDoc[]),
        call('task ls', () => d.listTasks({ filters: { service: [...agents.values(), ...swappers.values()] } })).then((x) => (x ?? []) as TaskDoc[]),
      ]);
      const runningContainer = (serviceId: string | undefined) => {
        const t = serviceId ? currentTask(tasks.filter((x) => x.ServiceID === serviceId)) : undefined;
        return t?.Status?.State === 'running' ? t.Status.ContainerStatus?.ContainerID : undefined;
      };
      return edgeNodes.map((nodeId): EdgeTarget => {
        const node = nodes.find((n) => n.ID === nodeId);
        const hostname = node?.Description?.Hostname ?? nodeId;
        if (!node) return { nodeId, hostname, why: 'the node left the Swarm' };
        if (node.Status?.State !== 'ready') return { nodeId, hostname, why: `the node is ${node.Status?.State ?? 'unknown'}` };
        const agentId = agents.get(nodeId);
        const t = agentId ? currentTask(tasks.filter((x) => x.ServiceID === agentId)) : undefined;
        const address = t && t.Status?.State === 'running' ? addressOn(t, o.network) : undefined;
        const container = t?.Status?.ContainerStatus?.ContainerID;
        const swapper = runningContainer(swappers.get(nodeId));
        return address && container ? { nodeId, hostname, agent: `${address}:${AGENT_PORT}`, container, ...(swapper ? { swapper } : {}) } : { nodeId, hostname, why: `its agent is not running (${t?.Status?.State ?? 'no task'})` };
      });
    },
  };
}
