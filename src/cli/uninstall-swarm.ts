// The Swarm part of `svc uninstall` (SVC_RUNTIME=swarm): the instance's Swarm services (app replicas and
// managed services) are removed through the manager's API, so Swarm stops their tasks on every node with
// their grace period (databases shut down cleanly; data directories stay). Removing a task's container by
// hand would leave its service behind. The probe helper is a plain container of the instance and the
// overlay network carries the instance's label: uninstall.ts removes both as on one host, once the tasks'
// endpoints are gone. The node agents are services of the instance too; their config secrets go last.
import type Docker from 'dockerode';
import { call } from '../runtime/docker-errors.js';
import { LABELS } from '../runtime/runtime.js';

/** Label Swarm puts on a task's container. */
export const SWARM_SERVICE_LABEL = 'com.docker.swarm.service.id';

/** Removes the instance's services when this engine is a Swarm manager; one line per service. */
export async function removeSwarmServices(docker: Docker, instance: string, o: { timeoutMs?: number } = {}): Promise<string[]> {
  const info = (await call('info', () => docker.info())) as { Swarm?: { ControlAvailable?: boolean; LocalNodeState?: string } };
  if (info.Swarm?.ControlAvailable !== true) {
    return info.Swarm?.LocalNodeState === 'active' ? ['this engine is a Swarm worker: run svc uninstall on the manager to remove the Swarm services'] : [];
  }
  const services = ((await call('service ls', () => docker.listServices({ filters: { label: [`${LABELS.instance}=${instance}`] } }))) ?? []) as unknown as { ID: string; Spec: { Name: string } }[];
  const lines: string[] = [];
  for (const s of services) {
    await call(`service rm ${s.Spec.Name}`, () => docker.getService(s.ID).remove(), [404]);
    lines.push(`removed Swarm service ${s.Spec.Name}`);
  }
  if (services.length === 0) return [...lines, ...(await removeSecrets(docker, instance))];
  // Their tasks stop with their grace period; wait for this engine's to be gone (other nodes stop theirs).
  const ids = new Set(services.map((s) => s.ID));
  const end = Date.now() + (o.timeoutMs ?? 60_000);
  for (;;) {
    const left = ((await call('ps', () => docker.listContainers({ all: true, filters: { label: [SWARM_SERVICE_LABEL] } }))) ?? []).filter((c) => ids.has(c.Labels[SWARM_SERVICE_LABEL] ?? ''));
    if (left.length === 0) break;
    if (Date.now() > end) {
      lines.push(`${left.length} task container(s) still stopping; Swarm removes them`);
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return [...lines, ...(await removeSecrets(docker, instance))];
}

/** The instance's Swarm secrets (the node agents' config), once no service names them. */
async function removeSecrets(docker: Docker, instance: string): Promise<string[]> {
  const filters = JSON.stringify({ label: [`${LABELS.instance}=${instance}`] });
  const secrets = ((await call('secret ls', () => docker.listSecrets({ filters } as never) as unknown as Promise<unknown>)) ?? []) as { ID: string; Spec: { Name: string } }[];
  const lines: string[] = [];
  for (const s of secrets) {
    await call(`secret rm ${s.Spec.Name}`, () => docker.getSecret(s.ID).remove(), [404]);
    lines.push(`removed Swarm secret ${s.Spec.Name}`);
  }
  return lines;
}
