// Pure: desired routes -> the complete Caddy JSON config. The adapter loads it only when it differs from
// what Caddy has, so the output must be deterministic: the same routes (in any order) give byte-identical
// JSON (sorted routes, sorted servers, keys written in sorted order).
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { OLDEST_FEATURES, type CaddyFeatures } from './caddy-version.js';
import type { Route, Upstream } from './proxy.js';

export interface CaddyConfigOptions {
  /** Caddy's admin endpoint, e.g. `http://127.0.0.1:2019`; kept in every config so a load never loses it. */
  adminUrl: string;
  httpPort: number;
  httpsPort: number;
  acmeEmail?: string;
  tlsIssuer: 'acme' | 'internal';
  /** SVC_ACME_CA: the ACME directory URL (default Caddy's). */
  acmeCa?: string;
  /** Where Caddy writes the TLS log svc reads for certificate failures (config.proxy.tlsLog). */
  tlsLog?: { caddyPath: string };
  /** Port of svc's DNS responder on 127.0.0.1 (dynamic upstreams resolve through it). */
  dnsPort: number;
  /** Optional certificate storage directory (host Caddy in external mode, tests); default Caddy's own. */
  storageDir?: string;
  /** What the Caddy loaded into allows (caddy-version.ts); default what Debian's 2.6.2 needs. */
  features?: CaddyFeatures;
}

/**
 * How often Caddy re-resolves an app's DNS name (only when a request comes: an idle app costs nothing);
 * a switch reaches traffic, and a replica taken out of the answer (dying, scaled down) stops being picked,
 * this long after the answer changed at most. 25 ms costs an app busier than 40 requests a second at most
 * 40 lookups a second, ~160 µs of CPU each (Caddy and dnsmasq): 0.6 % of a core, against 50 ms of a
 * deploy's time to serving on average at 100 ms (docs/decisions/0011-zero-downtime-switch-through-dns.md, bench:dns-refresh).
 */
export const DNS_REFRESH_MS = 25;

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** `host:port` of the admin listener, from its URL. */
export function adminListen(adminUrl: string): string {
  const u = new URL(adminUrl);
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
}

/** Routes that cannot be served together, dropped by buildCaddyConfig (the first app by name wins). */
export interface RouteConflict {
  app: string;
  reason: string;
}

/** Pure: splits routes into servable ones (sorted by app, then domain/port) and conflicts. */
export function partitionRoutes(routes: Route[], opts: Pick<CaddyConfigOptions, 'httpPort' | 'httpsPort' | 'adminUrl'>) {
  const sorted = [...routes].sort((a, b) => cmp(a.app, b.app) || cmp(a.domain ?? '', b.domain ?? '') || (a.port ?? 0) - (b.port ?? 0));
  const adminPort = Number(adminListen(opts.adminUrl).split(':').pop());
  const reserved = new Map<number, string>([
    [opts.httpPort, 'SVC_HTTP_PORT'],
    [opts.httpsPort, 'SVC_HTTPS_PORT'],
    [adminPort, 'the proxy admin port'],
  ]);
  const ports = new Map<number, string>();
  const domains = new Map<string, string>();
  const ok: Route[] = [];
  const conflicts: RouteConflict[] = [];
  for (const r of sorted) {
    if (r.mode === 'port') {
      if (!r.port) conflicts.push({ app: r.app, reason: 'port-mode route without a port' });
      else if (reserved.has(r.port)) conflicts.push({ app: r.app, reason: `port ${r.port} is ${reserved.get(r.port)}` });
      else if (ports.has(r.port)) conflicts.push({ app: r.app, reason: `port ${r.port} is already used by ${ports.get(r.port)}` });
      else {
        ports.set(r.port, r.app);
        ok.push(r);
      }
    } else {
      const d = r.domain?.toLowerCase();
      if (!d) conflicts.push({ app: r.app, reason: 'domain-mode route without a domain' });
      else if (domains.has(d)) conflicts.push({ app: r.app, reason: `domain ${d} is already used by ${domains.get(d)}` });
      else {
        domains.set(d, r.app);
        ok.push({ ...r, domain: d });
      }
    }
  }
  return { routes: ok, conflicts };
}

/**
 * How a `dns` route picks among the addresses its name answers (one per live replica) and retries (Caddy's
 * reverse_proxy, read in its source and measured; docs/decisions/0016-replicas-behind-one-name.md and
 * 0044-caddy-2-11.md):
 * - round_robin, whatever the count: one route for 1 or 50 replicas, so scaling never loads Caddy's config
 *   (rule 3 of the switch note). With one address it is `first`: 2.6.2 picks `pool[n % 1]`.
 * - try_duration 5s, try_interval 100ms: a request whose pick cannot be dialled (a replica just killed:
 *   refused, or no answer within the dial timeout; `dial_timeout` below is the DNS lookup's) is tried
 *   again on the next pick; with no address at all it waits up to 5 s (GET only).
 * - No `retries`: a count would cut that 5 s wait short for a one-address app.
 * - No `retry_match`: a request already sent when its replica died is retried only if it is a GET (Caddy's
 *   default); a POST might run twice.
 * - Passive health on both Caddies (DEAD_REPLICA); the dial timeout by the Caddy (dnsTransport).
 */
export const DNS_BALANCING = { selection_policy: { policy: 'round_robin' }, try_duration: '5s', try_interval: '100ms' } as const;

/**
 * Passive health: one failed dial or broken exchange marks the address down, so the requests after it skip
 * a dead replica instead of each waiting out its own dial. For 2 s: longer than svc takes to drop a dead
 * replica from the answer (bench:replicas, kill -> out of the answer: max ~1.2 s), short enough that a
 * replica that was only slow once (or the one address of an app) is tried again soon; a request meanwhile
 * waits in try_interval. On 2.6.2 too, though there its round_robin can miss the one available address
 * under concurrency (notes/zero-downtime-switch.md) and it does not retry a POST after "no upstreams
 * available" (503): measured, fewer POSTs fail with it than without (bench:replicas, docs/benchmarks.md).
 */
export const DEAD_REPLICA = { passive: { fail_duration: '2s', max_fails: 1 } } as const;

/**
 * The upstream dial timeout, by what the Caddy can do with a failed dial (measured, bench:replicas):
 * - Caddy >= 2.11.2 resends the body when it retries a dial error, so a dial may be cut short: 500 ms. A
 *   killed replica's address often still has a neighbour entry: the SYN goes nowhere and, with Caddy's 3 s
 *   default, a request waited 2.4-3 s on it. Under load ~0.5 % of good dials wait a 1 s SYN retransmit:
 *   cut short, they are retried elsewhere, body and all.
 * - Caddy 2.6.2 cannot resend a body (`invalid Read on closed Body`): every retried POST is a 502, so a
 *   short timeout would turn those slow good dials into failed POSTs. It keeps Caddy's 3 s: a dead
 *   replica costs the few requests that picked it before passive health marked it, up to 3 s each.
 */
export function dnsTransport(features: CaddyFeatures): Json {
  return features.resendsBodies ? { protocol: 'http', dial_timeout: '500ms' } : { protocol: 'http' };
}

/**
 * Request bodies up to this size are read whole before the upstream is dialled (nginx's default, its
 * `proxy_request_buffering on`); a larger body streams after its first 64 KiB. An app that answers before it
 * read a body (an early 401, a CGI that ignores stdin) and closes at once resets a connection still
 * receiving that body; Caddy 2.11's transport then cuts the answer it was reading ("aborting with incomplete
 * response": the client sees ECONNRESET). Measured (busybox httpd CGI, 16 keep-alive clients whose POST body
 * follows its headers by 0-10 ms, 10 s each, 2 cores): Caddy 2.11.4 10 resets in 8,722 requests without it,
 * 0 in 7,014 with it. Caddy 2.6.2 (which names it `buffer_requests`) showed no reset without it: not written.
 */
export const REQUEST_BUFFER_BYTES = 64 * 1024;

/** The page a route with no container answers (503, at once). Names no app: a visitor reads it. */
export const NO_CONTAINER_BODY =
  '<!doctype html><meta charset="utf-8"><title>503 Service Unavailable</title>' +
  '<h1>503 Service Unavailable</h1><p>This app has no running container yet: nothing is deployed, or its container is gone. ' +
  'Deploy it from svc (its app page, or <code>svc deploy APP</code>), then reload this page.</p>\n';

/** Pure: the handler of a route, by its upstream. */
export function routeHandler(up: Upstream, dnsPort: number, features: CaddyFeatures = OLDEST_FEATURES, drainSeconds = 0): Json {
  if (up.kind === 'none') {
    return {
      handler: 'static_response',
      status_code: 503,
      headers: { 'Content-Type': ['text/html; charset=utf-8'], 'Retry-After': ['5'], 'Cache-Control': ['no-store'] },
      body: NO_CONTAINER_BODY,
    };
  }
  const handler = reverseProxyHandler(up, dnsPort, features) as { [k: string]: Json };
  // A config load svc makes (a new listener, a new domain) replaces every handler; Caddy closes the streams
  // of a replaced one after this delay (at once by default). Each app keeps its own for its drain_seconds.
  if (features.streamCloseDelay && drainSeconds > 0 && up.kind !== 'edge') handler.stream_close_delay = `${drainSeconds}s`;
  return handler;
}

/** Set by the host's Caddy for the Swarm edge relay (overwriting whatever a client sent); the relay removes it. */
export const EDGE_ROUTE_HEADER = 'Svc-Edge-Route';

/**
 * The host Caddy's handler for an `edge` upstream (src/proxy/edge-config.ts). A new unix connection per
 * request (microseconds), never an idle one: the relay reloads at every change of the task addresses (a
 * switch), a reload closes its idle connections, and a POST written on one at that moment is a 502 (Go's
 * transport replays only bodiless idempotent requests; 2.6.2 cannot resend a body). Not `keep_alive.enabled:
 * false`: that sends `Connection: close`, and a Go server answering such a request closes without reading
 * the rest of its body, so when the app answered before the body arrived the host's write broke (`write:
 * broken pipe`, 1 % of POSTs). A negative `max_idle_conns_per_host` keeps no idle connection and sends no
 * such header: the relay reads the body before it answers (docs/decisions/0038-swarm-edge-relay.md). The
 * try_duration covers a relay being restarted (its socket absent: a dial error, retried for any method).
 */
export function edgeHandler(up: { socket: string; key: string }, features: CaddyFeatures = OLDEST_FEATURES): Json {
  return {
    handler: 'reverse_proxy',
    headers: { request: { set: { [EDGE_ROUTE_HEADER]: [up.key] } } },
    upstreams: [{ dial: `unix/${up.socket}` }],
    transport: { protocol: 'http', keep_alive: { max_idle_conns_per_host: -1 } },
    load_balancing: { try_duration: DNS_BALANCING.try_duration, try_interval: DNS_BALANCING.try_interval },
    // The relay gets a small body with its headers, as the app then does from the relay (REQUEST_BUFFER_BYTES).
    ...(features.requestBuffers ? { request_buffers: REQUEST_BUFFER_BYTES } : {}),
  };
}

/** Pure: the reverse_proxy handler for one upstream (design D of notes/zero-downtime-switch.md for `dns`). */
export function reverseProxyHandler(up: Exclude<Upstream, { kind: 'none' }>, dnsPort: number, features: CaddyFeatures = OLDEST_FEATURES): Json {
  if (up.kind === 'edge') return edgeHandler(up, features);
  if (up.kind === 'dns') {
    return {
      handler: 'reverse_proxy',
      dynamic_upstreams: {
        source: 'a',
        name: up.name.endsWith('.') ? up.name : `${up.name}.`,
        port: String(up.port),
        refresh: `${DNS_REFRESH_MS}ms`,
        // `udp/` matters: without it Caddy asks over TCP and every request fails after 5 s.
        resolver: { addresses: [`udp/127.0.0.1:${dnsPort}`] },
        dial_timeout: '1s',
      },
      load_balancing: DNS_BALANCING,
      health_checks: DEAD_REPLICA,
      transport: dnsTransport(features),
      ...(features.requestBuffers ? { request_buffers: REQUEST_BUFFER_BYTES } : {}),
    };
  }
  const u = new URL(up.url);
  const https = u.protocol === 'https:';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port || (https ? '443' : '80');
  const dialHost = isIP(host) === 6 ? `[${host}]` : host;
  const handler: { [k: string]: Json } = {
    handler: 'reverse_proxy',
    headers: { request: { set: { Host: [u.host] } } },
    upstreams: [{ dial: `${dialHost}:${port}` }],
  };
  if (https) handler.transport = { protocol: 'http', tls: isIP(host) ? {} : { server_name: host } };
  return handler;
}

/** How svc's servers are named: `domains` and `port-<N>` in a Caddy of its own, prefixed by the instance in a shared one. */
export interface ServerNames {
  domains: string;
  port(port: number): string;
}
export const OWN_NAMES: ServerNames = { domains: 'domains', port: (p) => `port-${p}` };

/** Pure: the servers for these routes (conflicting routes left out) and the domains they serve. */
export function buildServers(routes: Route[], opts: CaddyConfigOptions, names: ServerNames = OWN_NAMES): { servers: { [k: string]: Json }; domains: string[] } {
  const { routes: ok } = partitionRoutes(routes, opts);
  const servers: { [k: string]: Json } = {};
  const domainRoutes = ok.filter((r) => r.mode === 'domain').sort((a, b) => cmp(a.domain!, b.domain!));
  const portRoutes = ok.filter((r) => r.mode === 'port').sort((a, b) => a.port! - b.port!);
  if (domainRoutes.length > 0) {
    servers[names.domains] = {
      // Caddy's automatic HTTPS adds the HTTP->HTTPS redirect server on http_port by itself.
      listen: [`:${opts.httpsPort}`],
      routes: domainRoutes.map((r) => ({
        match: [{ host: [r.domain!] }],
        handle: [routeHandler(r.upstream, opts.dnsPort, opts.features, r.drainSeconds)],
        terminal: true,
      })),
    };
  }
  for (const r of portRoutes) {
    servers[names.port(r.port!)] = {
      listen: [`:${r.port}`],
      routes: [{ handle: [routeHandler(r.upstream, opts.dnsPort, opts.features, r.drainSeconds)], terminal: true }],
      automatic_https: { disable: true },
    };
  }
  return { servers, domains: domainRoutes.map((r) => r.domain!) };
}

/** Pure: the TLS issuer of svc's certificate policy. */
export function tlsIssuer(opts: Pick<CaddyConfigOptions, 'tlsIssuer' | 'acmeEmail' | 'acmeCa'>): Json {
  if (opts.tlsIssuer === 'internal') return { module: 'internal' };
  return { module: 'acme', ...(opts.acmeCa ? { ca: opts.acmeCa } : {}), ...(opts.acmeEmail ? { email: opts.acmeEmail } : {}) };
}

/** The name of svc's log in Caddy's `logging.logs` (per instance in a shared Caddy). */
export const tlsLogName = (instance = 'svc') => `${instance}_tls`;

/**
 * Pure: a Caddy log (its own logging config, JSON lines) of the certificate manager only (`tls.obtain`,
 * `tls.renew`, info and up: failures and successes), into a file svc reads (src/certs/). Rolled by Caddy
 * at 1 MiB, one old file kept. Caddy's default log is left as it is.
 */
export function tlsLogConfig(caddyPath: string): Json {
  return {
    writer: { output: 'file', filename: caddyPath, roll_size_mb: 1, roll_keep: 1 },
    encoder: { format: 'json' },
    level: 'INFO',
    include: ['tls.obtain', 'tls.renew'],
  };
}

/** Pure: the full Caddy config for these routes. Conflicting routes are left out (see partitionRoutes). */
export function buildCaddyConfig(routes: Route[], opts: CaddyConfigOptions): Json {
  const { servers, domains } = buildServers(routes, opts);
  const apps: { [k: string]: Json } = {
    http: { http_port: opts.httpPort, https_port: opts.httpsPort, servers },
  };
  if (domains.length > 0) {
    apps.tls = {
      automation: {
        policies: [{ subjects: domains, issuers: [tlsIssuer(opts)], on_demand: false }],
      },
    };
    // The local CA must not try to install itself into the host's trust store (needs root, prompts).
    if (opts.tlsIssuer === 'internal') apps.pki = { certificate_authorities: { local: { install_trust: false } } };
  }
  const config: { [k: string]: Json } = { admin: { listen: adminListen(opts.adminUrl) }, apps };
  if (opts.tlsLog) config.logging = { logs: { [tlsLogName()]: tlsLogConfig(opts.tlsLog.caddyPath) } };
  if (opts.storageDir) config.storage = { module: 'file_system', root: opts.storageDir };
  // The fingerprint: Caddy indexes `@id` values, so `GET /id/<id>/...` answers only while Caddy still has
  // exactly this config; a restarted or emptied Caddy answers 404 (see CaddyProxy.serves).
  (apps.http as { [k: string]: Json })['@id'] = configId(config);
  return sortKeys(config);
}

/** Pure: `svc-<hash>` of a config without its `@id`; the same routes give the same id. */
export function configId(config: Json): string {
  return `svc-${createHash('sha256').update(JSON.stringify(sortKeys(config))).digest('hex').slice(0, 16)}`;
}

/** Pure: a copy with object keys in sorted order (JSON.stringify of it is canonical). */
export function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

/** Canonical JSON text of a config, for comparing what Caddy has with what we want. */
export const canonicalJson = (v: unknown): string => JSON.stringify(sortKeys(v as Json));

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
