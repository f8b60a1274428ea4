// A healed container comes back on the address it had, but while it was down the host's neighbour (ARP)
// entry for that address failed, and Linux resolves it again only every `retrans_time_ms` (1 s by
// default). Measured on this engine: the first connection after `docker start` waited ~750 ms for ARP,
// so a heal took ~1.15 s to serve where the container itself was back in ~0.4 s. With 100 ms on svc's
// own bridge the first connection after the start gets through at once. Only that bridge is touched,
// and it is best effort: without root or a writable /proc (a daemon in a container) nothing changes.
import { writeFile } from 'node:fs/promises';
import type { Logger } from '../log.js';

/** Neighbour-resolution retry interval svc sets on its bridge. */
export const BRIDGE_RETRANS_MS = 100;

/** A Linux interface name (IFNAMSIZ - 1 = 15 chars), so a value from the engine cannot name another path. */
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;

/** Pure: the host interface of a bridge network, as the engine names it (`br-<id prefix>` unless set). */
export function bridgeInterface(net: { Id: string; Driver?: string; Options?: Record<string, string> }): string | undefined {
  if (net.Driver && net.Driver !== 'bridge') return undefined;
  const name = net.Options?.['com.docker.network.bridge.name'] || `br-${net.Id.slice(0, 12)}`;
  return IFNAME.test(name) && name !== '.' && name !== '..' ? name : undefined;
}

/** Sets the bridge's neighbour retry interval; logs and carries on when it cannot. */
export async function tuneBridgeNeighbours(net: { Id: string; Name?: string; Driver?: string; Options?: Record<string, string> }, log: Logger, procRoot = '/proc'): Promise<void> {
  const ifname = bridgeInterface(net);
  if (!ifname) return;
  try {
    await writeFile(`${procRoot}/sys/net/ipv4/neigh/${ifname}/retrans_time_ms`, String(BRIDGE_RETRANS_MS));
  } catch (err) {
    log.debug('could not shorten neighbour retries on the bridge; heals may take up to a second longer', { network: net.Name, interface: ifname, error: err });
  }
}
