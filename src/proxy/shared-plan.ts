// Pure: how svc converges its own part of a Caddy it shares (SVC_PROXY_MODE=external) with an operator's
// sites or with other svc instances. svc owns only the servers named after its instance
// (`<instance>-domains`, `<instance>-port-<N>`) and one TLS automation policy tagged `@id: <instance>-tls`;
// everything else in the config is someone else's and is never replaced or removed. Each write is scoped
// to one of those paths through the admin API, and the next write is decided again from what Caddy then
// has, so a missing parent (an empty Caddy) is created once, at the shallowest missing level.
import { canonicalJson, tlsIssuer, tlsLogName, type CaddyConfigOptions, type Json, type ServerNames } from './config.js';

export interface SharedWanted {
  servers: Record<string, Json>;
  /** svc's TLS automation policy (with its `@id`), when it serves domains. */
  tls?: Json;
  /** The internal issuer: a missing `apps.pki` gets `install_trust: false` (the local CA needs no root). */
  internalCa: boolean;
  /** svc's TLS log (`logging.logs.<instance>_tls`), when SVC_PROXY_TLS_LOG is set. */
  tlsLog?: Json;
}

export interface AdminWrite {
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  body?: Json;
}

/** Server names of `instance`; another instance's (even `svc` beside `svc-2`) never match. */
export function sharedNames(instance: string): ServerNames & { owns(name: string): boolean; tlsId: string; tlsLog: string } {
  const port = new RegExp(`^${instance.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-port-\\d+$`);
  return {
    domains: `${instance}-domains`,
    port: (p) => `${instance}-port-${p}`,
    owns: (name) => name === `${instance}-domains` || port.test(name),
    tlsId: `${instance}-tls`,
    tlsLog: tlsLogName(instance),
  };
}

/** Pure: svc's TLS policy for `domains` in a shared Caddy (undefined when it serves none). */
export function sharedTlsPolicy(domains: string[], opts: Pick<CaddyConfigOptions, 'tlsIssuer' | 'acmeEmail' | 'acmeCa'>, tlsId: string): Json | undefined {
  if (domains.length === 0) return undefined;
  return { '@id': tlsId, subjects: domains, issuers: [tlsIssuer(opts)], on_demand: false };
}

type Obj = { [k: string]: Json };
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** Pure: the next admin write that brings `have` (Caddy's whole config) closer to `wanted`, or undefined when svc's part is as wanted. */
export function nextSharedWrite(have: unknown, wanted: SharedWanted, names: ReturnType<typeof sharedNames>): AdminWrite | undefined {
  const root = obj(have);
  const apps = obj(root?.apps);
  const http = obj(apps?.http);
  const servers = obj(http?.servers);
  const wantedNames = Object.keys(wanted.servers).sort();

  if (!servers && wantedNames.length > 0) {
    const s = wanted.servers as Obj;
    if (!root) return { method: 'POST', path: '/config/', body: { apps: { http: { servers: s } } } };
    if (!apps) return { method: 'POST', path: '/config/apps', body: { http: { servers: s } } };
    if (!http) return { method: 'POST', path: '/config/apps/http', body: { servers: s } };
    return { method: 'POST', path: '/config/apps/http/servers', body: s };
  }
  for (const name of wantedNames) {
    if (!same(servers?.[name], wanted.servers[name])) return { method: 'POST', path: `/config/apps/http/servers/${encodeURIComponent(name)}`, body: wanted.servers[name] };
  }
  for (const name of Object.keys(servers ?? {}).sort()) {
    if (names.owns(name) && !(name in wanted.servers)) return { method: 'DELETE', path: `/config/apps/http/servers/${encodeURIComponent(name)}` };
  }

  const tls = obj(apps?.tls);
  const automation = obj(tls?.automation);
  const policies = Array.isArray(automation?.policies) ? (automation!.policies as Json[]) : undefined;
  const ours = policies?.find((p) => obj(p)?.['@id'] === names.tlsId);
  if (wanted.tls && !same(ours, wanted.tls)) {
    if (ours) return { method: 'PATCH', path: `/id/${names.tlsId}`, body: wanted.tls };
    // First in the list: a catch-all policy of the operator's placed before it would otherwise win.
    if (policies) return { method: 'PUT', path: '/config/apps/tls/automation/policies/0', body: wanted.tls };
    if (automation) return { method: 'POST', path: '/config/apps/tls/automation/policies', body: [wanted.tls] };
    if (tls) return { method: 'POST', path: '/config/apps/tls/automation', body: { policies: [wanted.tls] } };
    if (apps) return { method: 'POST', path: '/config/apps/tls', body: { automation: { policies: [wanted.tls] } } };
  }
  if (!wanted.tls && ours) return { method: 'DELETE', path: `/id/${names.tlsId}` };
  if (wanted.tls && wanted.internalCa && apps && apps.pki === undefined) {
    return { method: 'POST', path: '/config/apps/pki', body: { certificate_authorities: { local: { install_trust: false } } } };
  }

  // svc's own log in Caddy's logging config; the operator's logs are never touched.
  const logging = obj(root?.logging);
  const logs = obj(logging?.logs);
  const name = encodeURIComponent(names.tlsLog);
  if (wanted.tlsLog && root && !same(logs?.[names.tlsLog], wanted.tlsLog)) {
    if (logs) return { method: 'POST', path: `/config/logging/logs/${name}`, body: wanted.tlsLog };
    if (logging) return { method: 'POST', path: '/config/logging/logs', body: { [names.tlsLog]: wanted.tlsLog } };
    return { method: 'POST', path: '/config/logging', body: { logs: { [names.tlsLog]: wanted.tlsLog } } };
  }
  if (!wanted.tlsLog && logs?.[names.tlsLog] !== undefined) return { method: 'DELETE', path: `/config/logging/logs/${name}` };
  return undefined;
}
