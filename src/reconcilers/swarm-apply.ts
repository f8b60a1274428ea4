// The act half shared by the Swarm infrastructure reconcilers (agents:main, edges:main): a plan of services to
// create, update and remove and of secrets no longer named, carried out through the SwarmObjects port in the
// one order that works: the overlay and the wanted secrets first (a service names both), then the services,
// then the old secrets (Swarm refuses to remove one a service still names: the next pass tries again).
import type { Logger } from '../log.js';
import type { SwarmObjects, SwarmSecretRow, SwarmServiceRow, SwarmServiceSpec } from '../runtime/swarm-objects.js';

/** Secret name -> its Swarm id, for the specs (a spec names its secret by id). */
export type SecretIds = ReadonlyMap<string, string>;

export interface SwarmSteps {
  /** Secrets the wanted specs name; made when missing, before any service. */
  wantedSecrets: { name: string; data: string; labels: Record<string, string> }[];
  /** The secrets there are now (of the reconciler's kind). */
  secrets: SwarmSecretRow[];
  create: { node: string; image: string; spec: (ids: SecretIds) => SwarmServiceSpec }[];
  update: { node: string; image: string; service: SwarmServiceRow; spec: (ids: SecretIds) => SwarmServiceSpec }[];
  remove: SwarmServiceRow[];
  removeSecrets: string[];
}

/** Carries the steps out; `noun` names the services in the log ("node agent", "edge node service"). */
export async function applySwarmSteps(swarm: SwarmObjects, log: Logger, noun: string, s: SwarmSteps): Promise<void> {
  const ids = new Map(s.secrets.map((x) => [x.name, x.id]));
  if (s.create.length + s.update.length > 0) {
    await swarm.ensureNetwork();
    for (const w of s.wantedSecrets) if (!ids.has(w.name)) ids.set(w.name, await swarm.createSecret(w.name, w.labels, w.data));
  }
  for (const c of s.create) {
    const spec = c.spec(ids);
    await swarm.createService(spec, c.image);
    log.info(`${noun} created`, { node: c.node, service: spec.Name });
  }
  for (const u of s.update) {
    if (!(await swarm.updateService(u.service, u.spec(ids), u.image))) continue;
    log.info(`${noun} updated`, { node: u.node, service: u.service.name });
  }
  for (const r of s.remove) {
    await swarm.removeService(r);
    log.info(`${noun} removed`, { service: r.name });
  }
  for (const name of s.removeSecrets) {
    const secret = s.secrets.find((x) => x.name === name);
    if (!secret) continue;
    await swarm.removeSecret(secret).catch((err: Error) => log.debug(`${noun} secret not removed yet`, { secret: name, error: err.message }));
  }
}
