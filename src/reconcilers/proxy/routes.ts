// Pure: the routes the proxy should serve, from the app rows. Every app with routing fields gets its
// route. One with a live address, or with a deploy under way, points at its DNS name, so a deploy or a
// blue/green switch never changes the proxy config (only DNS answers). One with neither (`noContainer`:
// never deployed, its first deploy failed, scaled to 0, and no other replica in the answer) answers a 503
// page at once; its first deploy turns it into the DNS route when it begins, long before the switch.
import { appDnsName, type Route } from '../../proxy/proxy.js';
import type { AppRow } from '../../store/schema/index.js';

/**
 * `port` is the port the live container listens on (app_status: a build provider's, or the spec's
 * internal_port at the switch); null before anything went live, when the spec's internal_port is used.
 * `noContainer`: no live address and no deploy pending or running (see noContainer()).
 */
export function desiredRoutes(
  rows: (Pick<AppRow, 'name' | 'appType' | 'accessMode' | 'domain' | 'fallbackPort' | 'internalPort' | 'source'> & Partial<Pick<AppRow, 'drainSeconds'>> & { port: number | null; noContainer?: boolean })[],
): Route[] {
  const routes: Route[] = [];
  for (const a of rows) {
    const upstream: Route['upstream'] =
      a.appType === 'external_service'
        ? { kind: 'url', url: a.source ?? '' }
        : a.noContainer
          ? { kind: 'none' }
          : { kind: 'dns', name: appDnsName(a.name), port: a.port ?? a.internalPort };
    if (upstream.kind === 'url' && !upstream.url) continue;
    // Only a route that proxies has streams to keep across a config load.
    const drain = a.drainSeconds && upstream.kind !== 'none' ? { drainSeconds: a.drainSeconds } : {};
    if (a.accessMode === 'domain' && a.domain) routes.push({ app: a.name, mode: 'domain', domain: a.domain, upstream, ...drain });
    if (a.accessMode === 'port' && a.fallbackPort) routes.push({ app: a.name, mode: 'port', port: a.fallbackPort, upstream, ...drain });
  }
  // Code-point order, not localeCompare: names are ASCII, and a collator loads ICU data (~3 MB resident).
  return routes.sort((x, y) => (x.app < y.app ? -1 : x.app > y.app ? 1 : 0));
}

/**
 * Pure: the DNS answers, app DNS name -> the addresses of its live replicas (slot 0's, app_status, and
 * those of app_instances). One address stays a string, so a one-replica app's answer is what it was.
 */
export function desiredDnsRecords(
  rows: { id?: number; name: string; liveAddress: string | null }[],
  replicas: { appId: number; address: string | null }[] = [],
): Record<string, string | string[]> {
  const more = new Map<number, string[]>();
  for (const r of replicas) if (r.address) more.set(r.appId, [...(more.get(r.appId) ?? []), r.address]);
  const records: Record<string, string | string[]> = {};
  for (const a of rows) {
    const all = [...(a.liveAddress ? [a.liveAddress] : []), ...((a.id !== undefined && more.get(a.id)) || [])];
    if (all.length === 1) records[appDnsName(a.name)] = all[0];
    else if (all.length > 1) records[appDnsName(a.name)] = all.sort();
  }
  return records;
}

/**
 * Pure: true when nothing can answer for the app now and nothing is on its way (the 503 route). `replicaLive`:
 * a replica other than slot 0 has an address (it is in the DNS answer). `healing`: a deploy's live container
 * is out of the answer while it is restarted or recreated and probed (heal.ts), the app not scaled to 0:
 * its requests wait for it in the proxy's retries rather than get the 503 page, and no config load comes
 * with the heal.
 */
export const noContainer = (r: {
  liveAddress: string | null;
  deploying: number | boolean | null;
  replicaLive?: number | boolean | null;
  healing?: number | boolean | null;
}): boolean => !r.liveAddress && !r.deploying && !r.replicaLive && !r.healing;
