// Pure: the routes the proxy should serve, from the app rows. Every app with routing fields gets its
// route whether or not a container runs, so a deploy never changes the proxy config (only DNS answers).
import { appDnsName, type Route } from '../../proxy/proxy.js';
import type { AppRow } from '../../store/schema/index.js';

/**
 * `port` is the port the live container listens on (app_status: a build provider's, or the spec's
 * internal_port at the switch); null before anything went live, when the spec's internal_port is used.
 */
export function desiredRoutes(rows: (Pick<AppRow, 'name' | 'appType' | 'accessMode' | 'domain' | 'fallbackPort' | 'internalPort' | 'source'> & { port: number | null })[]): Route[] {
  const routes: Route[] = [];
  for (const a of rows) {
    const upstream: Route['upstream'] =
      a.appType === 'external_service'
        ? { kind: 'url', url: a.source ?? '' }
        : { kind: 'dns', name: appDnsName(a.name), port: a.port ?? a.internalPort };
    if (upstream.kind === 'url' && !upstream.url) continue;
    if (a.accessMode === 'domain' && a.domain) routes.push({ app: a.name, mode: 'domain', domain: a.domain, upstream });
    if (a.accessMode === 'port' && a.fallbackPort) routes.push({ app: a.name, mode: 'port', port: a.fallbackPort, upstream });
  }
  // Code-point order, not localeCompare: names are ASCII, and a collator loads ICU data (~3 MB resident).
  return routes.sort((x, y) => (x.app < y.app ? -1 : x.app > y.app ? 1 : 0));
}

/** Pure: the DNS answers, app DNS name -> live container address. */
export function desiredDnsRecords(rows: { name: string; liveAddress: string | null }[]): Record<string, string> {
  const records: Record<string, string> = {};
  for (const a of rows) if (a.liveAddress) records[appDnsName(a.name)] = a.liveAddress;
  return records;
}
