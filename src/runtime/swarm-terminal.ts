// The terminal on a Swarm (SVC_RUNTIME=swarm): every running replica of the app, wherever it runs, so a
// replica on a worker is named as such (409 `replica_on_other_node` in src/terminal/session.ts) rather than
// "not running". Sessions open through the manager's engine (docker-terminal.ts): Swarm's API has no exec,
// and svc reaches no other node's engine.
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import { LABELS } from './runtime.js';
import { currentTask, type NodeDoc, type ServiceDoc, type TaskDoc } from './swarm-map.js';
import type { AppContainer, TerminalPort } from './terminal.js';

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
      ...(t.NodeID !== selfId ? { node: host.get(t.NodeID ?? '') ?? t.NodeID ?? 'unknown' } : {}),
    });
  }
  return out.sort((a, b) => b.deployId - a.deployId || a.slot - b.slot);
}

export function createSwarmTerminal(o: { docker: Docker; selfNodeId: () => Promise<string>; local: TerminalPort; instance: string }): TerminalPort {
  return {
    async appContainers(appId) {
      const label = [`${LABELS.managed}=true`, `${LABELS.instance}=${o.instance}`, `${LABELS.appId}=${appId}`, `${LABELS.role}=app`];
      const services = ((await call('service ls', () => o.docker.listServices({ filters: { label } }))) ?? []) as unknown as ServiceDoc[];
      if (services.length === 0) return [];
      const tasks = ((await call('task ls', () => o.docker.listTasks({ filters: { service: services.map((s) => s.ID) } }))) ?? []) as TaskDoc[];
      const nodes = ((await call('node ls', () => o.docker.listNodes())) ?? []) as NodeDoc[];
      return replicasOf(services, tasks, nodes, await o.selfNodeId());
    },
    open: (containerId, cmd, size) => o.local.open(containerId, cmd, size),
  };
}
