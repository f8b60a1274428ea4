// Pure: the configs of a Swarm's edge (docs/decisions/0038-swarm-edge-relay.md, 0043-edge-nodes.md,
// 0047-swarm-edge-resolves.md). A Caddy that holds the listeners and TLS (the host's, an edge node's) sends every
// app's route to a relay on the overlay over a unix socket, with a header naming the upstream; the relay resolves
// the app's name through the resolver beside it (dynamic upstreams, as the host's Caddy on one engine), so a
// switch changes a DNS answer, never a config. Same input, same JSON.
import { join } from 'node:path';
import { buildCaddyConfig, configId, DNS_BALANCING, DNS_REFRESH_MS, EDGE_ROUTE_HEADER, REQUEST_BUFFER_BYTES, sortKeys, type CaddyConfigOptions, type Json } from './config.js';
import type { Route, Upstream } from './proxy.js';
import { keyRedactingLogs } from '../runtime/swarm-agent-spec.js';
import { agentServer } from './agent-server.js';
import { resolverAddress } from '../runtime/resolver-spec.js';
import { EDGE_ADMIN_HOST, EDGE_NODE_SOCKETS, edgeAdminConfig, edgeBootConfig, edgeServiceName } from '../runtime/swarm-edge-spec.js';

export { EDGE_ROUTE_HEADER, EDGE_ADMIN_HOST };
/** DNS name -> the live replicas' addresses: the DNS answers (src/dns/hosts.ts DnsRecords, the same shape). */
export type DnsRecords = Record<string, string | readonly string[]>;
/**
 * How long a task that could not be dialled (its node lost, its container gone) is skipped by the relay:
 * long enough for svc to take the address out (2-4 s measured), short enough for a replica that was only slow.
 */
export const EDGE_FAIL_DURATION = '10s';
/**
 * How long a dial of a task address may take. A task whose node is lost does not refuse: its dial waits this
 * out. 2 s still lets through a dial whose SYN was retransmitted once (at 1 s, under load).
 */
export const EDGE_DIAL_TIMEOUT = '2s';
/**
 * How long the relay keeps trying a request: a lost worker's dead addresses stay in the answer until svc
 * takes them out, and 10 s covers four dead picks before a live one. Only a GET already sent is retried.
 */
export const EDGE_TRY_DURATION = '10s';

/** Linux's limit for a unix socket path (108 bytes with the terminating NUL). */
const SOCKET_PATH_MAX = 107;

export interface EdgePaths {
  /** `<dataDir>/edge`: mounted at the same path into the relay (and into the proxy container). */
  dir: string;
  /** What the host's Caddy dials (the relay's listener), the relay's admin API, its boot config, its HOME. */
  socket: string;
  adminSocket: string;
  bootstrap: string;
  home: string;
  /** The relay's agent server: the daemon's calls to another node's engine, passed to that node's agent (decision 0041). */
  agentSocket: string;
}

/** The relay's paths keep the names they had in decision 0039 (relay A's): an upgrade keeps its container. */
export function edgePaths(dataDir: string): EdgePaths {
  const dir = join(dataDir, 'edge');
  const paths = { dir, socket: join(dir, 'relay-a.sock'), adminSocket: join(dir, 'admin-a.sock'), bootstrap: join(dir, 'bootstrap-a.json'), home: join(dir, 'a'), agentSocket: join(dir, 'agent.sock') };
  const long = [paths.socket, paths.adminSocket, paths.agentSocket].find((p) => Buffer.byteLength(p) > SOCKET_PATH_MAX);
  if (long) throw new Error(`SVC_DATA_DIR is too long for the Swarm edge's unix sockets (${long}: at most ${SOCKET_PATH_MAX} bytes)`);
  return paths;
}

/** The relay's key of a DNS upstream: `<name without dot>:<port>` (both already validated). */
export const edgeKey = (up: { name: string; port: number }) => `${up.name.replace(/\.$/, '')}:${up.port}`;

/** Pure: the routes a listening Caddy loads: every DNS upstream goes to the relay instead. */
export function viaEdge(routes: Route[], socket: string): Route[] {
  return routes.map((r) => (r.upstream.kind === 'dns' ? { ...r, upstream: { kind: 'edge', socket, key: edgeKey(r.upstream) } satisfies Upstream } : r));
}

/** Pure: a route of the relay: the app's name resolved through `resolver`, balanced, retried, small bodies read whole. */
const relayRoute = (key: string, up: { name: string; port: number }, resolver: string): Json => ({
  match: [{ header: { [EDGE_ROUTE_HEADER]: [key] } }],
  handle: [
    {
      handler: 'reverse_proxy',
      dynamic_upstreams: { source: 'a', name: up.name.endsWith('.') ? up.name : `${up.name}.`, port: String(up.port), refresh: `${DNS_REFRESH_MS}ms`, resolver: { addresses: [resolverAddress(resolver)] }, dial_timeout: '1s' },
      load_balancing: { ...DNS_BALANCING, try_duration: EDGE_TRY_DURATION },
      transport: { protocol: 'http', dial_timeout: EDGE_DIAL_TIMEOUT },
      // A task that cannot be dialled is skipped for a while instead of costing every request a dial timeout.
      health_checks: { passive: { fail_duration: EDGE_FAIL_DURATION, max_fails: 1 } },
      // config.ts REQUEST_BUFFER_BYTES; the relay runs the proxy image (caddy:2): the field needs Caddy >= 2.7.
      request_buffers: REQUEST_BUFFER_BYTES,
      // The app sees what the listening Caddy saw (the client), not the relay's unix peer.
      headers: {
        request: {
          delete: [EDGE_ROUTE_HEADER],
          set: Object.fromEntries(['X-Forwarded-For', 'X-Forwarded-Proto', 'X-Forwarded-Host'].map((h) => [h, [`{http.request.header.${h}}`]])),
        },
      },
    },
  ],
  terminal: true,
});

/**
 * Pure: a relay's whole config for these routes, resolving through `resolver` (its name on the overlay).
 * `paths.agentSocket`: the manager's relay only (an edge node's relay has no agent server).
 */
export function buildEdgeConfig(routes: Route[], resolver: string, paths: { socket: string; adminSocket: string; agentSocket?: string }): Json {
  const ups = new Map<string, { name: string; port: number }>();
  for (const r of routes) if (r.upstream.kind === 'dns') ups.set(edgeKey(r.upstream), r.upstream);
  const relayRoutes = [...ups.keys()].sort().map((key) => relayRoute(key, ups.get(key)!, resolver));
  // Not reachable from outside svc: a request without a known key is a mistake of svc's.
  relayRoutes.push({ handle: [{ handler: 'static_response', status_code: 502, body: 'svc edge: no route for this request\n' }], terminal: true });
  const servers: { [k: string]: Json } = { edge: { listen: [`unix/${paths.socket}`], routes: relayRoutes, automatic_https: { disable: true } } };
  if (paths.agentSocket) servers.agents = agentServer(paths.agentSocket);
  // The agents' key passes through the agent server: never in the relay's log.
  return withId({ admin: edgeAdminConfig(paths.adminSocket), logging: keyRedactingLogs(), apps: { http: { servers } } }, 'svc-edge');
}

/** Pure: `config` with its fingerprint (`configId` of it without one) as `apps.http['@id']`. */
function withId(config: { [k: string]: Json }, prefix?: string): Json {
  const { '@id': _, ...http } = (config.apps as { http: { [k: string]: Json } }).http;
  const out = { ...config, apps: { ...(config.apps as { [k: string]: Json }), http } };
  http['@id'] = configId(out, prefix);
  return sortKeys(out);
}

/** Pure: an edge node's Caddy config: the manager's plan (`opts`: its ports, issuer, TLS policy) sent to the node's relay, its admin API on its socket, without the manager's TLS log and storage. */
export function edgeNodeProxyConfig(routes: Route[], opts: CaddyConfigOptions): Json {
  const base = buildCaddyConfig(viaEdge(routes, EDGE_NODE_SOCKETS.relay), { ...opts, tlsLog: undefined, storageDir: undefined }) as { [k: string]: Json };
  return withId({ ...base, ...(edgeBootConfig('proxy') as { admin: Json }) });
}

/** Pure: an edge node's relay config: the manager relay's for these routes, its resolver the node's `dns` service. */
export function edgeNodeRelayConfig(routes: Route[], instance: string, nodeId: string): Json {
  return buildEdgeConfig(routes, edgeServiceName(instance, 'dns', nodeId), { socket: EDGE_NODE_SOCKETS.relay, adminSocket: EDGE_NODE_SOCKETS.relayAdmin });
}
