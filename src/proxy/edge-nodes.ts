// The edge nodes' Caddys and relays as the proxy parts see them (docs/decisions/0043-edge-nodes.md): the
// routes and task addresses the manager's relays get, loaded into every edge node's Caddy and two relays
// through the manager's relay and the node's agent. As on the manager (edge-swap.ts plans it), a config goes
// to the relay that carries no traffic, then the node's `relay.sock` link is swapped to it (edge-node-link.ts).
// An edge node never holds the manager: routes are loaded in the background (the
// proxy pass only starts it), a switch waits for the relays that answer within SWITCH_WAIT_MS, a drain counts
// what the relays that answer have in flight. Every proxy pass starts a look (fingerprints; load what differs),
// so a node that comes back, a restarted task or an emptied Caddy gets the current config within about a second.
import type { Logger } from '../log.js';
import { AGENT_DIAL_HEADER, AGENT_KEY_HEADER } from '../runtime/swarm-agent-spec.js';
import { EDGE_ADMIN_PREFIX, relayPart, type EdgePart } from '../runtime/swarm-edge-spec.js';
import { rejection, ProxyBindError } from './admin.js';
import { canonicalJson, type CaddyConfigOptions, type Json } from './config.js';
import { createEdgeAdmin, type EdgeAdmin } from './edge-admin.js';
import { relaySocketName, RELAY_IDS, type DnsRecords, type RelayId } from './edge-config.js';
import { createEdgeNodeLink, type EdgeNodeLink } from './edge-node-link.js';
import { STANDBY_IDLE_WAIT_MS } from './edge-relays.js';
import { activeFromLink, addRequests, inFlight, otherRelay, parseUpstreams, planRelayLoad, type RelayLook } from './edge-swap.js';
import { edgeNodeProxyConfig, edgeNodeRelayConfig, fingerprintOf } from './edge-node-config.js';
import type { Route } from './proxy.js';

/** How long a switch waits for an edge relay to take the new addresses: a node just lost must not hold it. */
export const SWITCH_WAIT_MS = 2000;
/** How long the list of edge nodes (and their agents' addresses) is reused before it is asked again. */
const TARGETS_TTL_MS = 5000;
/** A port listener an edge node could not bind is tried again after this long. */
const LEFT_OUT_RETRY_MS = 30_000;

export interface EdgeFleetTarget {
  nodeId: string;
  hostname: string;
  /** `<address>:<port>` of the node's agent; absent (with `why`) when it cannot be reached now. */
  agent?: string;
  /** The container of the node's agent (it mounts the volume: the `relay.sock` link is read through it). */
  container?: string;
  /** The node's swapper container (the link is renamed there: edge-node-link.ts), when it runs. */
  swapper?: string;
  why?: string;
}

export interface EdgeFleetOptions {
  /** The edge nodes now (src/runtime/swarm-edges.ts). */
  targets: () => Promise<EdgeFleetTarget[]>;
  /** The manager relay's agent socket (edge-config.ts `agentSocket`) and the agents' key. */
  agentSocket: string;
  key: string;
  /** The manager's proxy options: the edge nodes' Caddys get the same plan. */
  proxy: CaddyConfigOptions;
  log: Logger;
  now?: () => number;
  /** Default SWITCH_WAIT_MS. */
  switchWaitMs?: number;
  /** The nodes' `relay.sock` links; default: through the agents' archive endpoint (edge-node-link.ts). */
  link?: EdgeNodeLink;
  /** Default STANDBY_IDLE_WAIT_MS. */
  standbyIdleWaitMs?: number;
  /**
   * 1: relay A only, every load a reload of the relay carrying the traffic (the behaviour before the pair):
   * the baseline of `npm run bench:edge-node-reloads`. Default 2.
   */
  relays?: 1 | 2;
}

export interface EdgeFleet {
  /** Remembers the routes and loads them on every edge node, in the background. */
  setRoutes(routes: Route[]): void;
  /** New task addresses: loaded into every edge relay that answers, waiting at most SWITCH_WAIT_MS. */
  setRecords(records: DnsRecords): Promise<void>;
  /** In-flight requests per task address on the edge relays that answer (both of every node). */
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
  /** The active relay as last read or written, for the agent container it was read through (only svc changes it). */
  link?: { container: string; active: RelayId | undefined };
}

/** The routes without these port listeners (domain routes always stay). */
const withoutPorts = (rs: Route[], ports: ReadonlyMap<number, unknown>): Route[] => (ports.size === 0 ? rs : rs.filter((r) => !(r.mode === 'port' && r.port && ports.has(r.port))));

const timeout = <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);

export function createEdgeFleet(o: EdgeFleetOptions): EdgeFleet {
  const now = o.now ?? Date.now;
  const switchWaitMs = o.switchWaitMs ?? SWITCH_WAIT_MS;
  let routes: Route[] | undefined;
  let records: DnsRecords = {};
  let cached: { at: number; list: EdgeFleetTarget[] } | undefined;
  let looking: Promise<void> | undefined;
  const nodes = new Map<string, NodeState>();

  const stateOf = (id: string) => {
    let s = nodes.get(id);
    if (!s) nodes.set(id, (s = { chain: Promise.resolve(), leftOut: new Map() }));
    return s;
  };
  const link = o.link ?? createEdgeNodeLink({ agentSocket: o.agentSocket, key: o.key });
  const idleWaitMs = o.standbyIdleWaitMs ?? STANDBY_IDLE_WAIT_MS;
  const ids = RELAY_IDS.slice(0, o.relays ?? 2);
  // The configs of the last inputs (a look runs every second; rebuilding and hashing them each time is waste).
  let relayMemo: { routes: Route[]; records: DnsRecords; configs: Record<RelayId, Json> } | undefined;
  const proxyMemo = new Map<string, { routes: Route[]; config: Json }>();
  const relayConfigs = (rs: Route[]) => {
    if (relayMemo?.routes !== rs || relayMemo.records !== records) relayMemo = { routes: rs, records, configs: { a: edgeNodeRelayConfig(rs, records, 'a'), b: edgeNodeRelayConfig(rs, records, 'b') } };
    return relayMemo.configs;
  };
  const proxyConfig = (rs: Route[], leftOut: ReadonlyMap<number, unknown>) => {
    const key = [...leftOut.keys()].sort().join(',');
    const m = proxyMemo.get(key);
    if (m?.routes === rs) return m.config;
    if (proxyMemo.size > 16) proxyMemo.clear();
    const config = edgeNodeProxyConfig(withoutPorts(rs, leftOut), o.proxy);
    proxyMemo.set(key, { routes: rs, config });
    return config;
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

  /** Loads `config` unless the part already has it (its fingerprint answers, or the same JSON). */
  const ensure = async (a: EdgeAdmin, config: Json, fingerprintPath: string) => {
    const id = fingerprintOf(config);
    const quick = await a('GET', `/id/${id}/${fingerprintPath}`, undefined, 3000);
    if (quick.status === 200) return;
    const text = canonicalJson(config);
    const have = await a('GET', '/config/', undefined, 3000);
    if (have.status === 200) {
      try {
        if (canonicalJson(JSON.parse(have.text)) === text) return;
      } catch {
        /* not JSON: load */
      }
    } else if (have.status >= 500) {
      throw new Error(`its admin API is not reachable yet (HTTP ${have.status} from its agent: ${have.text.trim().slice(0, 200)})`);
    }
    const res = await a('POST', '/load', text, 15_000);
    if (res.status !== 200) throw rejection(`it rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 500)}`, res.text);
  };

  const relayAdmin = (t: EdgeFleetTarget, id: RelayId) => admin(t, relayPart(id));

  /** What one look at a relay of the node found (its agent answers 502 while its admin socket is not there). */
  const lookAt = async (t: EdgeFleetTarget, id: RelayId, config: Json): Promise<RelayLook> => {
    const res = await relayAdmin(t, id)('GET', `/id/${fingerprintOf(config)}/servers`, undefined, 3000).catch(() => undefined);
    if (!res || res.status >= 500) return { up: false, has: false };
    return { up: true, has: res.status === 200 };
  };

  /** The node's active relay (its link), read once per agent container and then kept: only svc writes it. */
  const activeOf = async (t: EdgeFleetTarget, st: NodeState): Promise<RelayId | undefined> => {
    if (st.link && st.link.container === t.container) return st.link.active;
    const active = activeFromLink(await link.read(t));
    st.link = { container: t.container ?? '', active };
    return active;
  };

  /** Resolves once the relay has no request to a task in flight, or after the bounded wait (false then). */
  const waitIdle = async (t: EdgeFleetTarget, id: RelayId): Promise<boolean> => {
    const until = now() + idleWaitMs;
    for (;;) {
      const res = await relayAdmin(t, id)('GET', '/reverse_proxy/upstreams', undefined, 1500).catch(() => undefined);
      if (res?.status !== 200 || inFlight(parseUpstreams(res.text)) === 0) return true;
      if (now() >= until) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /**
   * The node's relays for these routes and the last addresses, as on the manager (edge-swap.ts): the active
   * one keeps serving what it has; the standby is loaded (after its requests from before the last swap
   * ended, bounded), then the link is swapped to it. A failure forgets the link read, so it is read again.
   */
  const ensureRelays = async (t: EdgeFleetTarget, st: NodeState, rs: Route[]) => {
    const configs = relayConfigs(rs);
    try {
      const down: RelayLook = { up: false, has: false };
      const [active, a, b] = await Promise.all([activeOf(t, st), lookAt(t, 'a', configs.a), ids.includes('b') ? lookAt(t, 'b', configs.b) : down]);
      const look = { a, b };
      // No swapper running (the node just labelled, its task restarting): the link cannot be swapped, so the
      // standby counts as down and the active relay is loaded in place (the rare race) rather than left
      // serving addresses a switch is about to drain.
      if (active && !t.swapper) look[otherRelay(active)] = down;
      const plan = planRelayLoad(active, look);
      if (plan.kind === 'down') throw new Error('neither of its relays answers');
      if (plan.waitIdle && !(await waitIdle(t, plan.relay))) o.log.info('edge relay still had requests from before its last swap; loading it anyway', { node: t.hostname, relay: plan.relay, waited_ms: idleWaitMs });
      if (plan.inPlace && ids.length > 1) o.log.warn("the edge node's standby relay does not answer; reloading the active one under traffic", { node: t.hostname, relay: plan.relay });
      if (plan.load) {
        const res = await relayAdmin(t, plan.relay)('POST', '/load', canonicalJson(configs[plan.relay]), 15_000);
        if (res.status !== 200) throw new Error(`its relay ${plan.relay} rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 500)}`);
      }
      if (active !== plan.relay) {
        await link.point(t, relaySocketName(plan.relay), active === undefined);
        st.link = { container: t.container ?? '', active: plan.relay };
      }
    } catch (err) {
      st.link = undefined;
      throw err;
    }
  };

  /** The relays, then the Caddy (which sends to the active relay); a listener the node cannot bind is left out. */
  const converge = async (t: EdgeFleetTarget, st: NodeState) => {
    if (!routes) return;
    await ensureRelays(t, st, routes);
    for (const [port, at] of st.leftOut) if (now() - at > LEFT_OUT_RETRY_MS) st.leftOut.delete(port);
    // Bounded: each round leaves out one more listener, or throws.
    for (;;) {
      try {
        await ensure(admin(t, 'proxy'), proxyConfig(routes, st.leftOut), 'http_port');
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
    for (const t of list) {
      if (!t.agent) {
        const st = stateOf(t.nodeId);
        if (st.said !== t.why) o.log.warn('edge node not reachable; svc loads it when it is', { node: t.hostname, why: t.why });
        st.said = t.why;
      }
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
      records = next;
      if (!routes) return;
      const rs = routes;
      const list = (await targets()).filter((t) => t.agent);
      await Promise.all(
        list.map(async (t) => {
          const done = await timeout(onNode(t, 'loading new task addresses', (st) => ensureRelays(t, st, rs)), switchWaitMs);
          if (done === 'timeout') o.log.warn('edge relay did not take the new addresses in time; the switch goes on', { node: t.hostname, waited_ms: switchWaitMs });
        }),
      );
    },
    async upstreamRequests() {
      const out = new Map<string, number>();
      const list = (await targets()).filter((t) => t.agent);
      // Every relay of every node: the standby may still finish requests from before the last swap.
      await Promise.all(
        list.flatMap((t) => ids.map((id) => ({ t, id }))).map(async ({ t, id }) => {
          const res = await relayAdmin(t, id)('GET', '/reverse_proxy/upstreams', undefined, 1500).catch(() => undefined);
          if (res?.status === 200) addRequests(out, parseUpstreams(res.text));
        }),
      );
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
