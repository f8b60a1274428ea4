// The terminal on a Swarm (SVC_RUNTIME=swarm): every running replica of the app, wherever it runs. A session
// into a replica on the manager opens through its engine; one elsewhere through that node's agent
// (swarm-agents.ts), with the same code (docker-terminal.ts `openSession`). A replica whose node's agent does
// not run yet says so (409 `replica_on_other_node` in src/terminal/session.ts) rather than "not running".
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import { LABELS } from './runtime.js';
import { currentTask, type NodeDoc, type ServiceDoc, type TaskDoc } from './swarm-map.js';
import type { AppContainer, TerminalPort } from './terminal.js';
import { openSession } from './docker-terminal.js';
import { agentFailure, type NodeAgents } from './swarm-agents.js';

/** Pure: the running replicas of the services as terminal targets; `node` set for those not on `selfId`. */
export function replicasOf(services: ServiceDoc[], tasks: TaskDoc[], nodes: NodeDoc[], selfId: string): AppContainer[] {
  const host = new Map(nodes.map((n) => [n.ID, n.Description?.Hostname ?? n.ID]));
  const out: AppContainer[] = [];
  for (const s of services) {
    const t = currentTask(tasks.filter((x) => x.ServiceID === s.ID));
    const id = t?.Status?.ContainerStatus?.ContainerID;
    if (!t || t.Status?.State !== 'running' || t.DesiredState !== 'running' || !id) continue;
    const labels = s.Spec.Labels ?? {};
    out.push({
      id,
      name: s.Spec.Name,
      slot: Number(labels['svc.slot'] ?? 0),
      deployId: Number(labels[LABELS.deploy] ?? 0),
      ...(t.NodeID !== selfId ? { node: host.get(t.NodeID ?? '') ?? t.NodeID ?? 'unknown', nodeId: t.NodeID } : {}),
    });
  }
  return out.sort((a, b) => b.deployId - a.deployId || a.slot - b.slot);
}

export function createSwarmTerminal(o: { docker: Docker; selfNodeId: () => Promise<string>; local: TerminalPort; instance: string; agents?: Pick<NodeAgents, 'client' | 'unreachable'> }): TerminalPort {
  return {
    async appContainers(appId) {
      const label = [`${LABELS.managed}=true`, `${LABELS.instance}=${o.instance}`, `${LABELS.appId}=${appId}`, `${LABELS.role}=app`];
      const services = ((await call('service ls', () => o.docker.listServices({ filters: { label } }))) ?? []) as unknown as ServiceDoc[];
      if (services.length === 0) return [];
      const tasks = ((await call('task ls', () => o.docker.listTasks({ filters: { service: services.map((s) => s.ID) } }))) ?? []) as TaskDoc[];
      const nodes = ((await call('node ls', () => o.docker.listNodes())) ?? []) as NodeDoc[];
      const list = replicasOf(services, tasks, nodes, await o.selfNodeId());
      for (const c of list) {
        if (!c.nodeId) continue;
        c.unreachable = o.agents ? await o.agents.unreachable(c.nodeId) : 'svc reaches no other node\'s engine here';
      }
      return list;
    },
    async open(target, cmd, size) {
      if (!target.nodeId || !o.agents) return o.local.open(target, cmd, size);
      const node = target.nodeId;
      return openSession(await o.agents.client(node))(target.id, cmd, size).catch((err: unknown) => Promise.reject(agentFailure(node, err)));
    },
  };
}
