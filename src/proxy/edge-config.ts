// Pure: the edge relay of a Swarm (docs/decisions/0038-swarm-edge-relay.md, 0047-swarm-edge-resolves.md). The
// host's Caddy keeps every listener, TLS and route; an app's route goes to the relay, a second Caddy in a
// container on the instance's overlay, over a unix socket in svc's data directory (the relay's only
// listener), with a header naming the upstream. The relay resolves the app's DNS name as the host's Caddy
// does on one engine (dynamic upstreams), through the resolver beside it (src/runtime/resolver-spec.ts), balancing
// and retrying: a switch changes a DNS answer, never the relay's config. Same input, same JSON.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DNS_BALANCING, DNS_REFRESH_MS, EDGE_ROUTE_HEADER, REQUEST_BUFFER_BYTES, sortKeys, type Json } from './config.js';
import type { Route, Upstream } from './proxy.js';
import { keyRedactingLogs } from '../runtime/swarm-agent-spec.js';
import { agentServer } from './agent-server.js';
import { resolverAddress } from '../runtime/resolver-spec.js';
import { EDGE_ADMIN_HOST } from '../runtime/swarm-edge-spec.js';

export { EDGE_ROUTE_HEADER, EDGE_ADMIN_HOST };
/** DNS name -> the live replicas' addresses: the DNS answers (src/dns/hosts.ts DnsRecords, the same shape). */
export type DnsRecords = Record<string, string | readonly string[]>;
/**
 * How long a task that could not be dialled (its node lost, its container gone) is skipped by the relay:
 * long enough for svc to notice the node down and take the address out (2-4 s measured), short enough
 * that a replica that was only slow is back soon.
 */
export const EDGE_FAIL_DURATION = '10s';
/**
 * How long a dial of a task address may take in the relay. A task whose node is lost does not refuse: its
 * dial waits out this timeout. 2 s still lets through a dial whose SYN was retransmitted once (at 1 s, under
 * load); cut shorter, that would be a retry, and a POST 502 (2.6.2 cannot resend a body).
 */
export const EDGE_DIAL_TIMEOUT = '2s';
/**
 * How long the relay keeps trying a request, counted from its arrival. A worker lost with several replicas
 * leaves dead addresses in the answer until Swarm marks the node down and svc takes them out: a GET may
 * pick one dead address after another, each a dial timeout; with the host's 5 s two such picks ran out of
 * time (issue 35, defect 8). 10 s covers four dead picks before a live one. A request already sent is
 * retried only if it is a GET, so a longer try never runs a POST twice.
 */
export const EDGE_TRY_DURATION = '10s';

/** Linux's limit for a unix socket path (108 bytes with the terminating NUL). */
const SOCKET_PATH_MAX = 107;

export interface EdgePaths {
  /** `<dataDir>/edge`: mounted at the same path into the relay (and into the proxy container). */
  dir: string;
  /** What the host's Caddy dials: the relay's listener (the name relay A of the pair before had). */
  socket: string;
  /** Its admin API: svc loads its config there. */
  adminSocket: string;
  bootstrap: string;
  /** HOME and Caddy's XDG dirs (the autosaved config `--resume` reads). */
  home: string;
  /**
   * The relay's agent server: the daemon's calls to another node's engine, passed to that node's agent
   * (docs/decisions/0041-node-agents.md). The host's Caddy never dials it, so no public listener reaches it.
   */
  agentSocket: string;
}

export function edgePaths(dataDir: string): EdgePaths {
  const dir = join(dataDir, 'edge');
  const paths = { dir, socket: join(dir, 'relay-a.sock'), adminSocket: join(dir, 'admin-a.sock'), bootstrap: join(dir, 'bootstrap-a.json'), home: join(dir, 'a'), agentSocket: join(dir, 'agent.sock') };
  const long = [paths.socket, paths.adminSocket, paths.agentSocket].find((p) => Buffer.byteLength(p) > SOCKET_PATH_MAX);
  if (long) throw new Error(`SVC_DATA_DIR is too long for the Swarm edge's unix sockets (${long}: at most ${SOCKET_PATH_MAX} bytes)`);
  return paths;
}

/** The relay's key of a DNS upstream: `<name without dot>:<port>` (both already validated). */
export const edgeKey = (up: { name: string; port: number }) => `${up.name.replace(/\.$/, '')}:${up.port}`;

/** Pure: the routes the host's Caddy loads: every DNS upstream goes to the relay instead. */
export function viaEdge(routes: Route[], socket: string): Route[] {
  return routes.map((r) => (r.upstream.kind === 'dns' ? { ...r, upstream: { kind: 'edge', socket, key: edgeKey(r.upstream) } satisfies Upstream } : r));
}

/**
 * Pure: the relay's whole config for these routes, resolving through `resolver` (its name on the overlay).
 * `paths.agentSocket`: the manager's relay only (an edge node's relay has no agent server).
 */
export function buildEdgeConfig(routes: Route[], resolver: string, paths: { socket: string; adminSocket: string; agentSocket?: string }): Json {
  const ups = new Map<string, { name: string; port: number }>();
  for (const r of routes) if (r.upstream.kind === 'dns') ups.set(edgeKey(r.upstream), r.upstream);
  const keys = [...ups.keys()].sort();
  const relayRoutes: Json[] = keys.map((key) => {
    const up = ups.get(key)!;
    return {
      match: [{ header: { [EDGE_ROUTE_HEADER]: [key] } }],
      handle: [
        {
          handler: 'reverse_proxy',
          dynamic_upstreams: {
            source: 'a',
            name: up.name.endsWith('.') ? up.name : `${up.name}.`,
            port: String(up.port),
            refresh: `${DNS_REFRESH_MS}ms`,
            resolver: { addresses: [resolverAddress(resolver)] },
            dial_timeout: '1s',
          },
          load_balancing: { ...DNS_BALANCING, try_duration: EDGE_TRY_DURATION },
          transport: { protocol: 'http', dial_timeout: EDGE_DIAL_TIMEOUT },
          // A task that cannot be dialled is skipped for a while instead of costing every request a dial timeout.
          health_checks: { passive: { fail_duration: EDGE_FAIL_DURATION, max_fails: 1 } },
          // The relay talks to the apps: it reads small bodies whole first (config.ts REQUEST_BUFFER_BYTES).
          // The relay runs the proxy image (caddy:2, 2.11): the field needs Caddy >= 2.7.
          request_buffers: REQUEST_BUFFER_BYTES,
          // The app sees what the host's Caddy saw (the client), not the relay's unix peer.
          headers: {
            request: {
              delete: [EDGE_ROUTE_HEADER],
              set: {
                'X-Forwarded-For': ['{http.request.header.X-Forwarded-For}'],
                'X-Forwarded-Proto': ['{http.request.header.X-Forwarded-Proto}'],
                'X-Forwarded-Host': ['{http.request.header.X-Forwarded-Host}'],
              },
            },
          },
        },
      ],
      terminal: true,
    };
  });
  // Not reachable from outside svc: a request without a known key is a mistake of svc's.
  relayRoutes.push({ handle: [{ handler: 'static_response', status_code: 502, body: 'svc edge: no route for this request\n' }], terminal: true });
  const config: { [k: string]: Json } = {
    admin: { listen: `unix/${paths.adminSocket}`, origins: [EDGE_ADMIN_HOST] },
    // The agents' key passes through the agent server: never in the relay's log.
    logging: keyRedactingLogs(),
    apps: {
      http: {
        servers: {
          edge: { listen: [`unix/${paths.socket}`], routes: relayRoutes, automatic_https: { disable: true } },
          ...(paths.agentSocket ? { agents: agentServer(paths.agentSocket) } : {}),
        },
      },
    },
  };
  (config.apps as { [k: string]: { [k: string]: Json } }).http['@id'] = edgeConfigId(config);
  return sortKeys(config);
}

/** Pure: `svc-edge-<hash>` of the config without its id (the fingerprint `serves` asks for). */
export function edgeConfigId(config: Json): string {
  return `svc-edge-${createHash('sha256').update(JSON.stringify(sortKeys(config))).digest('hex').slice(0, 16)}`;
}

/** Pure: the config the relay starts with (admin only), before svc loads the routes. */
export function edgeBootstrap(paths: { adminSocket: string }): Json {
  return { admin: { listen: `unix/${paths.adminSocket}`, origins: [EDGE_ADMIN_HOST] } };
}
