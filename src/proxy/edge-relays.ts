// The manager's two edge relays, swapped (docs/decisions/0039-two-relays-swapped.md). Caddy 2.6 reloads its whole
// config at every load, and a request in flight on a server it shuts down may lose its connection while the
// host's Caddy still writes the body (EPIPE: a POST 502 about once in 20 deploys). So a config (new task
// addresses at a switch, a route change) is loaded into the relay that carries no traffic, confirmed, and
// `<dataDir>/edge/relay.sock`, a symlink the host's Caddy dials, is then swapped to it by a rename: new
// connections reach the fresh relay, requests in flight on the other finish there on its unchanged config.
// The symlink is the truth of which relay is active (read back after a daemon restart). Decisions: edge-swap.ts.
import { readlink, rename, rm, symlink } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { EdgeUnreachableError } from './edge-admin.js';
import { relaySocketName, RELAY_IDS, type DnsRecords, type EdgePaths, type RelayId } from './edge-config.js';
import { createEdgeRelayUnit, edgeRelayName, type EdgeRelayUnit } from './edge-relay.js';
import { activeFromLink, planRelayLoad, type RelayLook } from './edge-swap.js';
import type { Route } from './proxy.js';

/**
 * How long a standby's requests from before the previous swap may run before it is loaded anyway: a long
 * request (an upload, a slow answer) is cut only past this, never a short one.
 */
export const STANDBY_IDLE_WAIT_MS = 1000;

/** What the edge wrapper (edge-proxy.ts) needs of the relays. */
export interface EdgeRelay {
  /** Makes sure the relays run; never waits for them (`starting`: ask again shortly). */
  ensureRunning(): Promise<'running' | 'starting'>;
  /** Loads the config for these routes and the last task addresses, when the active relay has another. */
  applyRoutes(routes: Route[]): Promise<void>;
  /** New task addresses: served when this resolves (a switch waits on this), unless no relay answers. */
  setRecords(records: DnsRecords): Promise<void>;
  /** Cheap: the link points at a relay that has exactly the config of these routes and the last addresses, and the other answers. */
  serves(routes: Route[]): Promise<boolean>;
  /** In-flight requests per task address (`host:port`) through both relays, for draining a replica. */
  upstreamRequests(): Promise<Map<string, number>>;
}

export interface EdgeRelaysOptions {
  runtime: Runtime;
  /** The proxy image (SVC_PROXY_IMAGE): any Caddy 2 with /usr/bin/caddy. */
  image: string;
  instance: string;
  /** The instance's overlay network (SVC_NETWORK). */
  network: string;
  paths: EdgePaths;
  /** `uid:gid` the relays run as: svc's own. */
  user: string;
  log: Logger;
  /**
   * 1: relay A only, every load a reload of the relay carrying the traffic (the behaviour before the pair):
   * the baseline of `npm run bench:relay-reloads`. Default 2.
   */
  relays?: 1 | 2;
  now?: () => number;
}

/** The link's relay, or undefined (no link yet, or the socket of the single relay of before). */
async function readActive(socket: string): Promise<RelayId | undefined> {
  try {
    return activeFromLink(await readlink(socket));
  } catch {
    return undefined;
  }
}

/** Points the link at a relay atomically: a new link beside it, renamed over it (an old socket file too). */
async function pointLink(socket: string, id: RelayId): Promise<void> {
  const tmp = `${socket}.tmp`;
  await rm(tmp, { force: true });
  await symlink(relaySocketName(id), tmp);
  await rename(tmp, socket);
}

export function createEdgeRelays(o: EdgeRelaysOptions): EdgeRelay {
  const ids = RELAY_IDS.slice(0, o.relays ?? 2);
  const units = Object.fromEntries(
    RELAY_IDS.map((id) => [
      id,
      createEdgeRelayUnit({ ...o, id, dir: o.paths.dir, paths: o.paths.relays[id], agentSocket: id === 'a' ? o.paths.agentSocket : undefined }),
    ]),
  ) as Record<RelayId, EdgeRelayUnit>;
  let routes: Route[] | undefined;
  let records: DnsRecords = {};
  let chain: Promise<void> = Promise.resolve();

  const loadOnce = async () => {
    if (!routes) return;
    const active = await readActive(o.paths.socket);
    const wanted = { a: units.a.wanted(routes, records), b: units.b.wanted(routes, records) };
    const have = await Promise.all(RELAY_IDS.map((id) => (ids.includes(id) ? units[id].config() : Promise.resolve(undefined))));
    const look = Object.fromEntries(RELAY_IDS.map((id, i) => [id, { up: have[i] !== undefined, has: have[i] === wanted[id] }])) as Record<RelayId, RelayLook>;
    const plan = planRelayLoad(active, look);
    if (plan.kind === 'down') throw new EdgeUnreachableError(`the edge relays are unreachable (${ids.map((id) => edgeRelayName(o.instance, id)).join(', ')}: no admin API answers)`);
    const unit = units[plan.relay];
    if (plan.waitIdle && !(await unit.waitIdle(STANDBY_IDLE_WAIT_MS))) {
      o.log.info('edge relay still had requests from before its last swap; loading it anyway', { relay: edgeRelayName(o.instance, plan.relay), waitedMs: STANDBY_IDLE_WAIT_MS });
    }
    if (plan.inPlace && ids.length > 1) o.log.warn('the standby edge relay does not answer; reloading the active one under traffic', { relay: edgeRelayName(o.instance, plan.relay) });
    if (plan.load) await unit.load(wanted[plan.relay]);
    if (active !== plan.relay) await pointLink(o.paths.socket, plan.relay);
  };
  // Serialised: a switch's new addresses and a route change must not interleave their looks, loads and swaps.
  const load = () => {
    const run = chain.then(loadOnce);
    chain = run.catch(() => {});
    return run;
  };

  return {
    async ensureRunning() {
      // One relay that runs is enough to serve (a standby that is down makes loads in place): the other's
      // failure to start is logged, not thrown, so it cannot hold the routes' loads.
      const results = await Promise.allSettled(ids.map((id) => units[id].ensureRunning()));
      const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (ok.length === 0) throw (results[0] as PromiseRejectedResult).reason;
      results.forEach((r, i) => {
        if (r.status === 'rejected') o.log.warn('an edge relay did not start; the other serves alone', { relay: edgeRelayName(o.instance, ids[i]!), error: (r.reason as Error).message });
      });
      return ok.includes('running') ? 'running' : 'starting';
    },
    async applyRoutes(rs) {
      routes = rs;
      await load();
    },
    async setRecords(next) {
      records = next;
      try {
        await load();
      } catch (err) {
        // No relay answers: a switch still completes, and the proxy reconciler's next look (1 s) starts
        // the relays and loads these addresses.
        if (!(err instanceof EdgeUnreachableError)) throw err;
        o.log.warn('edge relays unreachable; their addresses are loaded when one runs again', { error: err.message });
      }
    },
    async serves(rs) {
      if (!routes) return false;
      const active = await readActive(o.paths.socket);
      if (!active || !ids.includes(active)) return false;
      const others = ids.filter((id) => id !== active);
      // The standby is looked at too, so one that is gone is started again by the reconciler's next pass.
      const [served, ...up] = await Promise.all([units[active].serves(rs, records), ...others.map((id) => units[id].answers())]);
      return served && up.every(Boolean);
    },
    async upstreamRequests() {
      const out = new Map<string, number>();
      for (const counts of await Promise.all(ids.map((id) => units[id].upstreamRequests()))) for (const [k, v] of counts) out.set(k, (out.get(k) ?? 0) + v);
      return out;
    },
  };
}
