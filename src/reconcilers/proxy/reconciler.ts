// The proxy reconciler (key `proxy:main`): makes the reverse proxy serve exactly the routes of the apps
// in the database, with its DNS responder up and, in container or host mode, its Caddy running. Route
// changes come from app create/update/delete only; deploys change DNS answers, never the proxy config.
// The data plane repairs itself: the responder's liveness and Caddy's config are observed state, looked
// at again every `probeMs` with no event needed (a killed responder, a Caddy restarted with an empty
// config). When Caddy still serves the fingerprint of the wanted config, a pass is a pid-file read and
// one small admin GET (a Caddy svc runs itself is asked only when its process changed, or every 30 s:
// src/proxy/trust.ts); anything else takes the full path (ensure the proxy runs, compare, load).
import type { Reconciler, Result } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import type { Proxy, Route } from '../../proxy/proxy.js';
import type { Db } from '../../store/db.js';
import { eq, sql } from 'drizzle-orm';
import { apps, appStatus } from '../../store/schema/index.js';
import type { DnsSync } from './dns-sync.js';
import { desiredRoutes, noContainer } from './routes.js';
import { ProxyBindError } from '../../proxy/admin.js';
import type { HeldPorts } from '../../proxy/held-ports.js';
import { observeRouteErrors } from '../../observed/routes.js';
import { whenChanged } from '../../store/data-version.js';
import {
  BLIND_CAP_MS, BLOCKED_CAP_MS, blockedNeedsLook, blockedNotDue, listenersToLeaveOut, nextBlocked, nextRetryAt, rejectedMessage, withoutListeners, type Blocked,
} from './listeners.js';

/** How often the data plane is looked at without an event: a fault is repaired within about this. */
export const PROXY_PROBE_MS = 1000;
/** How soon a pass comes back while the responder or Caddy is starting (DESIGN.md rule 3: no sleep inside). */
export const STARTING_RETRY_MS = 50;

export interface ProxyReconcilerDeps {
  db: Db;
  proxy: Proxy;
  dns: DnsSync;
  /** Starts the DNS responder process when it does not run; never waits (`starting`: come back shortly). */
  ensureDnsResponder: () => Promise<'running' | 'starting' | void>;
  /** Container or host mode: makes sure Caddy runs, never waiting (external mode: undefined). */
  ensureProxyRunning?: () => Promise<'running' | 'starting' | void>;
  log: Logger;
  /** Default PROXY_PROBE_MS. */
  probeMs?: number;
  /** The host's listening TCP ports (src/proxy/listening.ts); absent or undefined: cannot tell, no pre-check. */
  listening?: () => ReadonlySet<number> | undefined;
  /** Told the ports the proxy holds after each full pass (the commands' `port_in_use` check skips them). */
  held?: HeldPorts;
  /** Default Date.now. */
  now?: () => number;
}

/** Only what desiredRoutes reads: mapping every column of every app was most of a pass. */
const ROUTE_COLUMNS = {
  name: apps.name,
  appType: apps.appType,
  accessMode: apps.accessMode,
  domain: apps.domain,
  fallbackPort: apps.fallbackPort,
  internalPort: apps.internalPort,
  source: apps.source,
  drainSeconds: apps.drainSeconds,
  port: appStatus.port,
  liveAddress: appStatus.liveAddress,
  // A deploy about to bring the first container: its route waits for it (dynamic upstream), not 503.
  deploying: sql<number>`exists (select 1 from deploys where deploys.app_id = ${apps.id} and deploys.status in ('pending', 'running'))`,
  // Another replica with an address: the DNS answer still holds it while slot 0 is healing (on a Swarm, its
  // node lost), so the route must stay the DNS one, not the 503 page.
  replicaLive: sql<number>`exists (select 1 from app_instances where app_instances.app_id = ${apps.id} and app_instances.address is not null)`,
  // The live container of a deploy out of the answer while it is healed (heal.ts): the route stays.
  healing: sql<number>`(${appStatus.liveContainerName} is not null and ${appStatus.liveDeployId} is not null and ${apps.replicas} > 0)`,
};

export function createProxyReconciler(deps: ProxyReconcilerDeps): Reconciler {
  const again: Result = { requeueAfterMs: deps.probeMs ?? PROXY_PROBE_MS };
  const soon: Result = { requeueAfterMs: Math.min(STARTING_RETRY_MS, again.requeueAfterMs!) };
  // Whether a full pass succeeded since the daemon started (the first one always runs in full, so a
  // changed proxy image or a stopped container is handled at start).
  let converged = false;
  // Port listeners left out because their port is taken on the host (listeners.ts), retried with backoff.
  let blocked = new Map<number, Blocked>();
  const now = deps.now ?? Date.now;
  // The routes the database implies, read again only after something was written (a pass runs every
  // second; re-reading every app each time was most of the daemon's idle CPU). The same array comes back
  // while nothing changed, so the proxy's own caches keyed on it hold.
  // A write that changed no route (an env var, an event, a status) hands back the same array too: with a
  // new one every second under writes, the proxy compared its whole config again each pass (a shared
  // Caddy's parsed and canonicalised, 1,000 servers: the largest stall of GET /api/apps/{id} under 20
  // env writes/s, bench:api --engine, issue 36). One JSON of the routes costs far less.
  let last: { routes: Route[]; json: string } | undefined;
  const wantedRoutes = whenChanged(deps.db, () => {
    const rows = deps.db.select(ROUTE_COLUMNS).from(apps).leftJoin(appStatus, eq(appStatus.appId, apps.id)).all();
    const routes = desiredRoutes(rows.map((r) => ({ ...r, noContainer: noContainer(r) })));
    const json = JSON.stringify(routes);
    if (last?.json !== json) last = { routes, json };
    return last.routes;
  });
  // A blocked listener comes back no later than its retry time, even with a long probe interval.
  const within = (r: Result): Result => {
    const at = nextRetryAt(blocked);
    return at === undefined ? r : { requeueAfterMs: Math.max(0, Math.min(r.requeueAfterMs ?? Infinity, at - now())) };
  };

  /** Loads the routes without the listeners that cannot bind; returns those left out (port -> app, error). */
  async function load(routes: Route[], t: number) {
    const held = (await deps.proxy.heldPorts?.()) ?? new Set<number>();
    // The host's table only when a listener is new to Caddy (it can be large on a busy host).
    const fresh = routes.some((r) => r.mode === 'port' && r.port && !held.has(r.port));
    const busy = fresh ? deps.listening?.() : deps.listening && new Set<number>();
    const leftOut = listenersToLeaveOut(routes, { held, busy, blocked, now: t });
    const capMs = busy ? BLOCKED_CAP_MS : BLIND_CAP_MS;
    // Bounded: each round leaves out one more port listener, or throws.
    for (;;) {
      try {
        await deps.proxy.apply(withoutListeners(routes, leftOut));
        return { leftOut, capMs };
      } catch (err) {
        const port = err instanceof ProxyBindError ? err.port : undefined;
        const route = routes.find((r) => r.mode === 'port' && r.port === port);
        if (port === undefined || !route || leftOut.has(port)) throw err;
        deps.log.warn('proxy rejected a listener (port taken); loading the other routes without it', { app: route.app, port });
        leftOut.set(port, { app: route.app, error: rejectedMessage(port, (err as Error).message) });
      }
    }
  }

  return {
    kind: 'proxy',
    listNames: () => ['main'],
    async reconcile(): Promise<Result> {
      const responder = await deps.ensureDnsResponder();
      const next = responder === 'starting' ? soon : again;
      await deps.dns.sync();
      const routes = wantedRoutes();
      const t = now();
      const look = blockedNeedsLook(blocked, routes, t);
      if (converged && !look && (await deps.proxy.serves(withoutListeners(routes, blockedNotDue(blocked, t))))) return within(next);
      if (converged && !look) deps.log.info('proxy config out of date (routes changed, or Caddy restarted or emptied); applying', { routes: routes.length });
      converged = false;
      if ((await deps.ensureProxyRunning?.()) === 'starting') return soon;
      const { leftOut, capMs } = await load(routes, t);
      for (const [port, l] of leftOut) if (!blocked.has(port)) deps.log.warn('route left out of the proxy config', { app: l.app, port, reason: l.error });
      blocked = nextBlocked(blocked, leftOut, t, capMs);
      deps.held?.set(withoutListeners(routes, leftOut).flatMap((r) => (r.mode === 'port' && r.port ? [r.port] : [])));
      observeRouteErrors(deps.db, new Map([...leftOut.values()].map((l) => [l.app, l.error])));
      converged = true;
      return within(next);
    },
  };
}
