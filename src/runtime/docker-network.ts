// Creating a named bridge network safely. The engine's CheckDuplicate is best effort: two concurrent
// creates of one name both succeed and leave twins, after which the name resolves to neither reliably.
// So after creating, we look for twins and the loser (the newer one) removes its own.
import type Docker from 'dockerode';
import type { Logger } from '../log.js';
import { tuneBridgeNeighbours } from './bridge-neighbours.js';
import { call, engineError, engineMessage, EngineError, statusOf } from './docker-errors.js';
import { svcNetworks } from './docker-networks.js';
import { poolAdvice, POOL_EXHAUSTED_RE } from './pool-advice.js';

/** Code-point order (the engine's ISO timestamps and hex ids are ASCII); no ICU collator needed. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Networks whose name is exactly `name` (the engine's filter matches substrings), oldest first. */
async function twins(docker: Docker, name: string) {
  const all = (await call(`network ls ${name}`, () => docker.listNetworks({ filters: { name: [name] } }))) ?? [];
  return all.filter((n) => n.Name === name).sort((a, b) => byText(a.Created ?? '', b.Created ?? '') || byText(a.Id, b.Id));
}

/**
 * Makes sure one bridge network called `name` exists (tolerating a concurrent creation by anyone) and tunes
 * its bridge. One it creates carries `svc.instance` (rule 14), so its twin check and any cleanup know whose it is.
 */
export async function ensureNetworkOnce(docker: Docker, log: Logger, name: string, instance?: string): Promise<string | undefined> {
  await createIfMissing(docker, log, name, instance);
  const net = (await twins(docker, name))[0];
  if (net) await tuneBridgeNeighbours(net, log);
  return net?.Id;
}

/** The engine's answer when a container is started on a network that is gone (removed behind svc's back). */
export const NETWORK_GONE_RE = /network .* not found/i;

async function createIfMissing(docker: Docker, log: Logger, name: string, instance?: string): Promise<void> {
  if ((await twins(docker, name)).length > 0) return;
  let id: string;
  try {
    const created = await docker.createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: { 'svc.managed': 'true', ...(instance ? { 'svc.instance': instance } : {}) } });
    id = created.id;
  } catch (err) {
    if (statusOf(err) === 409 || /already exists/i.test(engineMessage(err))) return; // someone else won
    if (POOL_EXHAUSTED_RE.test(engineMessage(err))) {
      // Say which networks to remove: left as it is, this message is a dead end for a user.
      const networks = await svcNetworks(docker).catch(() => []);
      throw new EngineError(`docker network create ${name}: ${poolAdvice(networks, name)}`, statusOf(err), engineMessage(err));
    }
    throw engineError(`network create ${name}`, err);
  }
  const found = await twins(docker, name);
  if (found.length > 1 && found[0]!.Id !== id) {
    await call(`network rm ${name}`, () => docker.getNetwork(id).remove(), [404]);
    log.debug('removed a twin network created concurrently', { network: name });
    return;
  }
  log.info('created network', { network: name });
}
