// The svc networks on the engine, with how many running containers each has (the engine lists endpoints of running ones only; a stopped container does not keep a network from being removed): for the address-pool advice and
// for `svc uninstall` (which removes its own network only). Slow path: one inspect per network.
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import type { NetworkFact } from './pool-advice.js';

export async function svcNetworks(docker: Docker): Promise<NetworkFact[]> {
  const list = (await call('network ls', () => docker.listNetworks({ filters: { label: ['svc.managed=true'] } }))) ?? [];
  const facts = await Promise.all(
    list.map(async (n) => {
      const doc = (await call(`network inspect ${n.Name}`, () => docker.getNetwork(n.Id).inspect(), [404])) as
        | { Name: string; Labels?: Record<string, string> | null; Containers?: Record<string, unknown> | null }
        | undefined;
      return doc ? { name: doc.Name, labels: doc.Labels ?? {}, containers: Object.keys(doc.Containers ?? {}).length } : undefined;
    }),
  );
  return facts.filter((f): f is NetworkFact => f !== undefined);
}
