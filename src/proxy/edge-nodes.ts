// The edge nodes as the proxy parts see them (docs/decisions/0043-edge-nodes.md, 0047-swarm-edge-resolves.md): the
// manager's routes loaded into each node's Caddy and relay, the hosts files written into its resolver's volume, all
// through the manager's relay and the node's agent. A switch writes files and waits for a node at most
// SWITCH_WAIT_MS; routes load in the background; every proxy pass starts a look that fixes what differs.
import type { Logger } from '../log.js';
import { AGENT_DIAL_HEADER, AGENT_KEY_HEADER } from '../runtime/swarm-agent-spec.js';
import { EDGE_ADMIN_PREFIX, EDGE_DNS_DIR, type EdgePart } from '../runtime/swarm-edge-spec.js';
import type { EdgeTarget as EdgeFleetTarget } from '../runtime/swarm-edges.js';
import { ProxyBindError } from './admin.js';
import type { CaddyConfigOptions, Json } from './config.js';
import { edgeNodeProxyConfig, edgeNodeRelayConfig, type DnsRecords } from './edge-config.js';
import { addUpstreams, createEdgeAdmin, ensureConfig, type EdgeAdmin } from './edge-admin.js';
import type { Route } from './proxy.js';
import { socketRequest } from './socket-request.js';

/** How long a switch waits for an edge node to take the new answers: a node just lost must not hold it. */
export const SWITCH_WAIT_MS = 2000;
/** How long the list of edge nodes (and their agents' addresses) is reused before it is asked again. */
const TARGETS_TTL_MS = 5000;
/** A port listener an edge node could not bind is tried again after this long. */
const LEFT_OUT_RETRY_MS = 30_000;

/** The hosts files as src/dns/hosts.ts writes and reads them (given by the wiring: dns/ is not proxy/'s to import). */
export interface HostsFilesPort {
  files(records: DnsRecords): Map<string, string>;
  /** A tar of the files that differ from `have` (undefined: none). */
  tar(wanted: Map<string, string>, have: ReadonlyMap<string, string>): Buffer | undefined;
  read(tar: Buffer): Map<string, string>;
}

export interface EdgeFleetOptions {
  /** The edge nodes now (src/runtime/swarm-edges.ts). */
  targets: () => Promise<EdgeFleetTarget[]>;
  /** The manager relay's agent socket (edge-config.ts `agentSocket`) and the agents' key. */
  agentSocket: string;
  key: string;
  /** The instance (the names of the nodes' resolvers). */
  instance: string;
  hosts: HostsFilesPort;
  /** The manager's proxy options: the edge nodes' Caddys get the same plan. */
  proxy: CaddyConfigOptions;
  log: Logger;
  now?: () => number;
  /** Default SWITCH_WAIT_MS. */
  switchWaitMs?: number;
}

export interface EdgeFleet {
  /** Remembers the routes and loads them on every edge node, in the background. */
  setRoutes(routes: Route[]): void;
  /** New DNS answers: written to every edge node that answers, waiting at most SWITCH_WAIT_MS. */
  setRecords(records: DnsRecords): Promise<void>;
  /** In-flight requests per task address on the edge relays that answer. */
  upstreamRequests(): Promise<Map<string, number>>;
  /** A look at every edge node in the background (one at a time): load what does not serve the current config. */
  check(): void;
  /** The edge nodes changed (the `edges:main` pass made or removed services): ask for them again. */
  invalidate(): void;
  /** Resolves when the look under way (if any) ends; for tests. */
  idle(): Promise<void>;
}

interface NodeState {
  chain: Promise<void>;
  /** Port listeners this node could not bind, and when they were left out. */
  leftOut: Map<number, number>;
  /** The last failure said (logged once per change). */
  said?: string;
  /** The hosts files on the node as last read or written, for the agent container they went through (only svc writes them). */
  files?: { container: string; have: Map<string, string> };
}

/** The routes without these port listeners (domain routes always stay). */
const withoutPorts = (rs: Route[], ports: ReadonlyMap<number, unknown>): Route[] => (ports.size === 0 ? rs : rs.filter((r) => !(r.mode === 'port' && r.port && ports.has(r.port))));

const timeout = <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);

export function createEdgeFleet(o: EdgeFleetOptions): EdgeFleet {
  const now = o.now ?? Date.now;
  const switchWaitMs = o.switchWaitMs ?? SWITCH_WAIT_MS;
  let routes: Route[] | undefined;
  let wantedFiles = new Map<string, string>();
  let cached: { at: number; list: EdgeFleetTarget[] } | undefined;
  let looking: Promise<void> | undefined;
  const nodes = new Map<string, NodeState>();

  const stateOf = (id: string) => nodes.get(id) ?? nodes.set(id, { chain: Promise.resolve(), leftOut: new Map() }).get(id)!;
  // The Caddy's config of the last routes per set of ports left out (a look runs every second: not rebuilt each time).
  const memo = new Map<string, { routes: Route[]; config: Json }>();
  const proxyConfig = (rs: Route[], leftOut: ReadonlyMap<number, unknown>) => {
    const key = [...leftOut.keys()].sort().join(',');
    if (memo.get(key)?.routes !== rs) memo.set(key, { routes: rs, config: edgeNodeProxyConfig(withoutPorts(rs, leftOut), o.proxy) });
    return memo.get(key)!.config;
  };
  const admin = (t: EdgeFleetTarget, part: EdgePart): EdgeAdmin =>
    createEdgeAdmin(o.agentSocket, { headers: { [AGENT_DIAL_HEADER]: t.agent!, [AGENT_KEY_HEADER]: o.key }, prefix: EDGE_ADMIN_PREFIX[part] });

  const targets = async (): Promise<EdgeFleetTarget[]> => {
    if (cached && now() - cached.at < TARGETS_TTL_MS) return cached.list;
    try {
      cached = { at: now(), list: await o.targets() };
    } catch (err) {
      o.log.warn('could not list the edge nodes; using the last list', { error: (err as Error).message });
      cached = { at: now(), list: cached?.list ?? [] };
    }
    for (const id of nodes.keys()) if (!cached.list.some((t) => t.nodeId === id)) nodes.delete(id);
    return cached.list;
  };

  /** The node's engine through its agent (the archive endpoint of the agent's container). */
  const engine = async (t: EdgeFleetTarget, method: 'GET' | 'PUT', body?: Buffer) => {
    if (!t.agent || !t.container) throw new Error('its agent is not running');
    const res = await socketRequest({
      socketPath: o.agentSocket,
      path: `/containers/${encodeURIComponent(t.container)}/archive?path=${encodeURIComponent(EDGE_DNS_DIR)}`,
      method,
      headers: { host: 'docker', [AGENT_DIAL_HEADER]: t.agent, [AGENT_KEY_HEADER]: o.key, ...(body ? { 'content-type': 'application/x-tar' } : {}) },
      body,
      timeoutMs: 5000,
      timedOut: () => new Error('its engine did not answer within 5 s'),
    });
    if (res.status !== 200) throw new Error(`its engine answered HTTP ${res.status} to ${method} of the hosts files: ${res.body.toString('utf8').trim().slice(0, 200)}`);
    return res.body;
  };

  /** Writes the hosts files that differ on the node (read once per agent container, then kept); a failure forgets them. */
  const ensureDns = async (t: EdgeFleetTarget, st: NodeState) => {
    try {
      const known = st.files?.container === t.container ? st.files : undefined;
      const have = known?.have ?? o.hosts.read(await engine(t, 'GET'));
      st.files = { container: t.container ?? '', have };
      const wanted = wantedFiles;
      const tar = o.hosts.tar(wanted, have);
      if (!tar) return;
      await engine(t, 'PUT', tar);
      for (const name of have.keys()) if (!wanted.has(name)) have.set(name, '');
      for (const [name, text] of wanted) have.set(name, text);
    } catch (err) {
      st.files = undefined;
      throw err;
    }
  };

  /** The answers, the relay, then the Caddy (which sends to the relay); a listener the node cannot bind is left out. */
  const converge = async (t: EdgeFleetTarget, st: NodeState) => {
    if (!routes) return;
    await ensureDns(t, st);
    await ensureConfig(admin(t, 'relay'), edgeNodeRelayConfig(routes, o.instance, t.nodeId), 'servers', 'its relay');
    for (const [port, at] of st.leftOut) if (now() - at > LEFT_OUT_RETRY_MS) st.leftOut.delete(port);
    // Bounded: each round leaves out one more listener, or throws.
    for (;;) {
      try {
        await ensureConfig(admin(t, 'proxy'), proxyConfig(routes, st.leftOut), 'http_port', 'its Caddy');
        return;
      } catch (err) {
        if (!(err instanceof ProxyBindError) || st.leftOut.has(err.port)) throw err;
        o.log.warn('edge node could not listen on a port; loading its other routes without it', { node: t.hostname, port: err.port });
        st.leftOut.set(err.port, now());
      }
    }
  };

  /** Runs `work` after the node's earlier work (serialised per node); failures are said once per change. */
  const onNode = (t: EdgeFleetTarget, what: string, work: (st: NodeState) => Promise<void>): Promise<void> => {
    const st = stateOf(t.nodeId);
    const run = st.chain.then(async () => {
      try {
        await work(st);
        if (st.said) o.log.info('edge node serves again', { node: t.hostname });
        st.said = undefined;
      } catch (err) {
        const msg = `${what}: ${(err as Error).message}`;
        if (st.said !== msg) o.log.warn('edge node not loaded; svc tries again', { node: t.hostname, error: msg });
        st.said = msg;
      }
    });
    st.chain = run;
    return run;
  };

  const look = async () => {
    const list = await targets();
    for (const t of list.filter((x) => !x.agent)) {
      const st = stateOf(t.nodeId);
      if (st.said !== t.why) o.log.warn('edge node not reachable; svc loads it when it is', { node: t.hostname, why: t.why });
      st.said = t.why;
    }
    await Promise.all(list.filter((t) => t.agent).map((t) => onNode(t, 'loading its routes', (st) => converge(t, st))));
  };

  const check = () => {
    if (looking || !routes) return;
    looking = look().finally(() => (looking = undefined));
  };

  return {
    setRoutes(next) {
      routes = next;
      check();
    },
    async setRecords(next) {
      wantedFiles = o.hosts.files(next);
      const list = (await targets()).filter((t) => t.agent);
      await Promise.all(
        list.map(async (t) => {
          const done = await timeout(onNode(t, 'writing new DNS answers', (st) => ensureDns(t, st)), switchWaitMs);
          if (done === 'timeout') o.log.warn('edge node did not take the new DNS answers in time; the switch goes on', { node: t.hostname, waited_ms: switchWaitMs });
        }),
      );
    },
    async upstreamRequests() {
      const out = new Map<string, number>();
      const list = (await targets()).filter((t) => t.agent);
      await Promise.all(list.map((t) => addUpstreams(admin(t, 'relay'), out, 1500).catch(() => out)));
      return out;
    },
    check,
    invalidate() {
      cached = undefined;
      check();
    },
    async idle() {
      await looking;
    },
  };
}
