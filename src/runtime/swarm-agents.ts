// The node agents of a Swarm (docs/decisions/0041-node-agents.md): one Caddy service per node other
// than the manager svc runs on, passing svc's exec calls to that node's engine. `reconcile` makes them match
// the nodes (swarm-agent-spec.ts plans it); `client` is a dockerode client for one node's engine through
// the edge relay's agent socket (the daemon is not on the overlay; the relay is, and dials the agent's task
// address named in a header). The key is in a header of every call; it is never logged.
import type Docker from 'dockerode';
import type { Logger } from '../log.js';
import { call, engineMessage, statusOf } from './docker-errors.js';
import { createDockerClient } from './docker-client.js';
import type { RegistryAuthLookup } from './runtime.js';
import { addressOn, currentTask, type NodeDoc, type TaskDoc } from './swarm-map.js';
import {
  AGENT_DIAL_HEADER,
  AGENT_KEY_HEADER,
  AGENT_PORT,
  AGENT_ROLE,
  AGENT_SPEC_LABEL,
  agentSecret,
  agentServiceName,
  agentServiceSpec,
  planAgents,
  type PlanNode,
} from './swarm-agent-spec.js';
import { isEdgeNode } from './swarm-edge-spec.js';

export interface NodeAgentsOptions {
  /** The manager's engine (Swarm API). */
  docker: Docker;
  instance: string;
  /** The instance's overlay (SVC_NETWORK): the agents listen on it, the relay reaches them there. */
  network: string;
  /** SVC_PROXY_IMAGE: any Caddy 2 with /usr/bin/caddy (the relay's image). */
  image: string;
  /** Hex of the agents' key (32 bytes derived from the sealing key). */
  key: string;
  /** The edge relay's agent socket (edge-config.ts `agentSocket`). */
  agentSocket: string;
  selfNodeId: () => Promise<string>;
  ensureNetwork: () => Promise<void>;
  registryAuth?: RegistryAuthLookup;
  log: Logger;
}

export interface NodeAgents {
  /**
   * Makes the agents match the nodes now; rejects on an engine error. Called by the `agents:main` pass
   * (src/reconcilers/agents), whose work queue coalesces, retries with backoff and comes back periodically.
   */
  reconcile(): Promise<void>;
  /** A client for the node's engine through its agent; throws, saying why, when the agent does not run. */
  client(nodeId: string): Promise<Docker>;
  /** Why the node's engine cannot be reached now; undefined when its agent runs. */
  unreachable(nodeId: string): Promise<string | undefined>;
}

/**
 * Whether a node's agent mounts the edge volume: on an edge node, and on one whose `svc.edge` label is not
 * understood (its edge services are kept as they are then, so the way to them is too).
 */
export function agentReachesEdge(labels: Record<string, string> | undefined): boolean {
  try {
    return isEdgeNode(labels);
  } catch {
    return true;
  }
}

/** A failure of a call through an agent, in words an operator can act on. */
export function agentFailure(node: string, err: unknown): Error {
  const status = statusOf(err);
  const msg = engineMessage(err);
  if (/ENOENT|ECONNREFUSED/.test(msg) && !status) return new Error(`the edge relay, svc's way onto the overlay, is not running yet, so the agent of node ${node} cannot be reached`);
  if (status === 502 || status === 504) return new Error(`the agent of node ${node} did not answer through the edge relay (is it starting?)`);
  if (status === 403) return new Error(`the agent of node ${node} refused the call (its config is being updated)`);
  return err instanceof Error ? err : new Error(msg);
}

export function createNodeAgents(o: NodeAgentsOptions): NodeAgents {
  const d = o.docker;
  const secret = agentSecret(o.instance, o.key);
  const ours = [`svc.managed=true`, `svc.instance=${o.instance}`, `svc.role=${AGENT_ROLE}`];

  const specFor = (node: PlanNode, socket: string, secretId: string) =>
    agentServiceSpec({ instance: o.instance, network: o.network, image: o.image, nodeId: node.id, socket, secret: { id: secretId, name: secret.name }, edge: agentReachesEdge(node.labels) });

  const reconcile = async () => {
    const nodes = ((await call('node ls', () => d.listNodes())) ?? []) as NodeDoc[];
    const services = ((await call('service ls', () => d.listServices({ filters: { label: ours } }))) ?? []) as unknown as { ID: string; Spec: { Name: string; Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } } }[];
    const secrets = ((await call('secret ls', () => d.listSecrets({ filters: JSON.stringify({ label: ours }) } as never) as unknown as Promise<unknown>)) ?? []) as unknown as { ID: string; Spec: { Name: string } }[];
    const selfId = await o.selfNodeId();
    let secretId = secrets.find((s) => s.Spec.Name === secret.name)?.ID;
    const plan = planAgents({
      selfId,
      nodes: nodes.map((n) => ({ id: n.ID, hostname: n.Description?.Hostname, labels: n.Spec?.Labels ?? {} })),
      services: services.map((s) => ({ id: s.ID, name: s.Spec.Name, labels: s.Spec.Labels ?? {}, replicas: s.Spec.Mode?.Replicated?.Replicas })),
      secrets: secrets.map((s) => s.Spec.Name),
      wantedSecret: secret.name,
      // The hash does not depend on the secret's id (the name holds the config's hash).
      wantedHash: (node, socket) => specFor(node, socket, '').Labels[AGENT_SPEC_LABEL]!,
    });
    for (const s of plan.skipped) o.log.warn('no agent for this node', { node: s.node.hostname ?? s.node.id, reason: s.reason });
    if (plan.create.length + plan.update.length > 0) {
      await o.ensureNetwork();
      if (!secretId) {
        const labels = Object.fromEntries(ours.map((l) => l.split('=') as [string, string]));
        const made = (await call(`secret create ${secret.name}`, () => d.createSecret({ Name: secret.name, Labels: labels, Data: Buffer.from(secret.data).toString('base64') } as never)))!;
        secretId = (made as unknown as { id: string }).id;
      }
    }
    const auth = o.registryAuth?.(o.image);
    for (const c of plan.create) {
      const spec = (specFor(c.node, c.socket, secretId!));
      await call(`service create ${spec.Name}`, () => (auth ? d.createService(auth as never, spec as never) : d.createService(spec as never)) as Promise<unknown>);
      o.log.info('node agent created', { node: c.node.hostname ?? c.node.id, service: spec.Name });
    }
    for (const u of plan.update) {
      const spec = (specFor(u.node, u.socket, secretId!));
      const doc = (await call(`service inspect ${u.service.name}`, () => d.getService(u.service.id).inspect(), [404])) as { Version: { Index: number } } | undefined;
      if (!doc) continue;
      const body = { ...spec, version: doc.Version.Index } as never;
      await call(`service update ${u.service.name}`, () => (auth ? d.getService(u.service.id).update(auth as never, body) : d.getService(u.service.id).update(body)) as Promise<unknown>);
      o.log.info('node agent updated', { node: u.node.hostname ?? u.node.id, service: u.service.name });
    }
    for (const s of plan.remove) {
      await call(`service rm ${s.name}`, () => d.getService(s.id).remove(), [404]);
      o.log.info('node agent removed', { service: s.name });
    }
    for (const name of plan.removeSecrets) {
      // A secret a service still names cannot go yet (Swarm refuses): the next reconcile tries again.
      const s = secrets.find((x) => x.Spec.Name === name)!;
      await call(`secret rm ${name}`, () => d.getSecret(s.ID).remove(), [404]).catch((err: Error) => o.log.debug('agent secret not removed yet', { secret: name, error: err.message }));
    }
  };

  const hostOf = async (nodeId: string) =>
    (((await call(`node inspect ${nodeId}`, () => d.getNode(nodeId).inspect(), [404]).catch(() => undefined)) as NodeDoc | undefined)?.Description?.Hostname ?? nodeId);

  /** The agent's task address on the overlay, or why there is none. */
  const addressOf = async (nodeId: string): Promise<{ address: string } | { why: string }> => {
    const name = agentServiceName(o.instance, nodeId);
    const svc = (await call(`service inspect ${name}`, () => d.getService(name).inspect(), [404])) as { ID: string } | undefined;
    if (!svc) return { why: `the agent of node ${await hostOf(nodeId)} is not running yet (no service ${name})` };
    const tasks = ((await call('task ls', () => d.listTasks({ filters: { service: [svc.ID] } }))) ?? []) as TaskDoc[];
    const t = currentTask(tasks);
    const address = t && t.Status?.State === 'running' ? addressOn(t, o.network) : undefined;
    if (!address) return { why: `the agent of node ${await hostOf(nodeId)} is not running yet (its task is ${t?.Status?.State ?? 'not created'}${t?.Status?.Err ? `: ${t.Status.Err}` : ''})` };
    return { address };
  };

  return {
    reconcile,
    async client(nodeId) {
      const found = await addressOf(nodeId);
      if ('why' in found) throw new Error(found.why);
      return createDockerClient({ socketPath: o.agentSocket, headers: { [AGENT_DIAL_HEADER]: `${found.address}:${AGENT_PORT}`, [AGENT_KEY_HEADER]: o.key } } as Docker.DockerOptions);
    },
    async unreachable(nodeId) {
      const found = await addressOf(nodeId);
      return 'why' in found ? found.why : undefined;
    },
  };
}
