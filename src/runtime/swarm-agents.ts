// The way to other nodes' engines on a Swarm: through the node agents, one Caddy service per node other than
// the manager, passing svc's exec and archive calls to that node's engine (made and kept by the `agents:main`
// reconciler, src/reconcilers/agents). `client` is a dockerode client for one node's engine through the edge
// relay's agent socket (the daemon is not on the overlay; the relay is, and dials the agent's task address
// named in a header). The key is in a header of every call; it is never logged.
import type Docker from 'dockerode';
import { call, engineMessage, statusOf } from './docker-errors.js';
import { createDockerClient } from './docker-client.js';
import { addressOn, currentTask, type NodeDoc, type TaskDoc } from './swarm-map.js';
import { AGENT_DIAL_HEADER, AGENT_KEY_HEADER, AGENT_PORT, agentServiceName } from './swarm-agent-spec.js';
import { isEdgeNode } from './swarm-edge-spec.js';

export interface NodeAgentsOptions {
  /** The manager's engine (Swarm API). */
  docker: Docker;
  instance: string;
  /** The instance's overlay (SVC_NETWORK): the agents' task addresses are read on it. */
  network: string;
  /** Hex of the agents' key (32 bytes derived from the sealing key). */
  key: string;
  /** The edge relay's agent socket (edge-config.ts `agentSocket`). */
  agentSocket: string;
}

export interface NodeAgents {
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
