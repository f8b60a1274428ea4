// Edge nodes of a Swarm as the proxy reaches them (src/proxy/edge-nodes.ts): which nodes have the edge services
// the `edges:main` reconciler keeps, and how the daemon reaches them (the task address of the node's agent).
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import { addressOn, currentTask, type NodeDoc, type ServiceDoc, type TaskDoc } from './swarm-map.js';
import { AGENT_NODE_LABEL, AGENT_PORT, AGENT_ROLE } from './swarm-agent-spec.js';
import { EDGE_NODE_OF, EDGE_ROLES } from './swarm-edge-spec.js';

export interface EdgeNodesOptions {
  /** The manager's engine (Swarm API). */
  docker: Docker;
  instance: string;
  /** The instance's overlay: the agents' task addresses are read on it. */
  network: string;
}

/** An edge node as the proxy sees it: where to send its admin calls (its agent), or why it cannot be reached now. */
export interface EdgeTarget {
  nodeId: string;
  hostname: string;
  /** `<agent task address>:2380` when the node is ready and its agent runs. */
  agent?: string;
  /** The agent's container (it mounts the resolver's volume: the hosts files are written through it). */
  container?: string;
  /** Why not (node down, agent not running). */
  why?: string;
}

export interface EdgeNodes {
  /** The edge nodes (those with an edge proxy service of this instance) and how to reach them. */
  targets(): Promise<EdgeTarget[]>;
}

export function createEdgeNodes(o: EdgeNodesOptions): EdgeNodes {
  const d = o.docker;
  const ours = [`svc.managed=true`, `svc.instance=${o.instance}`];

  return {
    async targets() {
      const services = ((await call('service ls', () => d.listServices({ filters: { label: ours } }))) ?? []) as unknown as ServiceDoc[];
      const edgeNodes = [...new Set(services.filter((s) => s.Spec.Labels?.['svc.role'] === EDGE_ROLES.proxy).map((s) => s.Spec.Labels?.[EDGE_NODE_OF] ?? ''))].filter(Boolean).sort();
      if (edgeNodes.length === 0) return [];
      const agents = new Map(services.filter((s) => s.Spec.Labels?.['svc.role'] === AGENT_ROLE).map((s) => [s.Spec.Labels?.[AGENT_NODE_LABEL] ?? '', s.ID]));
      const [nodes, tasks] = await Promise.all([
        call('node ls', () => d.listNodes()).then((x) => (x ?? []) as NodeDoc[]),
        call('task ls', () => d.listTasks({ filters: { service: [...agents.values()] } })).then((x) => (x ?? []) as TaskDoc[]),
      ]);
      return edgeNodes.map((nodeId): EdgeTarget => {
        const node = nodes.find((n) => n.ID === nodeId);
        const hostname = node?.Description?.Hostname ?? nodeId;
        if (!node) return { nodeId, hostname, why: 'the node left the Swarm' };
        if (node.Status?.State !== 'ready') return { nodeId, hostname, why: `the node is ${node.Status?.State ?? 'unknown'}` };
        const agentId = agents.get(nodeId);
        const t = agentId ? currentTask(tasks.filter((x) => x.ServiceID === agentId)) : undefined;
        const address = t && t.Status?.State === 'running' ? addressOn(t, o.network) : undefined;
        const container = t?.Status?.ContainerStatus?.ContainerID;
        return address && container ? { nodeId, hostname, agent: `${address}:${AGENT_PORT}`, container } : { nodeId, hostname, why: `its agent is not running (${t?.Status?.State ?? 'no task'})` };
      });
    },
  };
}
