// One app on a taken port never blocks the other routes (issue 18): the proxy reconciler leaves that one
// listener out (before loading when the host shows the port taken, after a rejected load otherwise),
// records the app's `route_error`, retries with backoff, and brings the route back once the port is free.
// A fake Proxy that rejects like Caddy (ProxyBindError) over a real `:memory:` SQLite.
import { beforeEach, describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { silentLogger } from '../../../src/log.js';
import { createProxyReconciler, PROXY_PROBE_MS } from '../../../src/reconcilers/proxy/reconciler.js';
import {
  BLIND_CAP_MS, blockedBackoffMs, blockedNeedsLook, listenersToLeaveOut, nextBlocked, takenMessage, withoutListeners, type Blocked,
} from '../../../src/reconcilers/proxy/listeners.js';
import { ProxyBindError } from '../../../src/proxy/admin.js';
import { createHeldPorts } from '../../../src/proxy/held-ports.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import type { Db } from '../../../src/store/db.js';
import { createApp, deleteApp } from '../../support/commands.js';
import { getAppWithDeployVersion } from '../../../src/store/apps.js';

const port = (app: string, p: number): Route => ({ app, mode: 'port', port: p, upstream: { kind: 'none' } });
const domain = (app: string, d: string): Route => ({ app, mode: 'domain', domain: d, upstream: { kind: 'none' } });

describe('which listeners to leave out (pure)', () => {
  const routes = [port('bad', 2024), domain('site', 'a.example.com'), port('web', 8080)];

  it('leaves out a port the host shows taken unless the proxy holds it; nothing when it cannot tell', () => {
    const none = new Map<number, Blocked>();
    expect(listenersToLeaveOut(routes, { held: new Set(), busy: new Set([2024]), blocked: none, now: 0 })).toEqual(new Map([[2024, { app: 'bad', error: takenMessage(2024) }]]));
    expect([...listenersToLeaveOut(routes, { held: new Set([2024]), busy: new Set([2024, 8080]), blocked: none, now: 0 }).keys()]).toEqual([8080]);
    expect(listenersToLeaveOut(routes, { held: new Set(), busy: undefined, blocked: none, now: 0 })).toEqual(new Map());
    expect(withoutListeners(routes, new Set([2024]))).toEqual([domain('site', 'a.example.com'), port('web', 8080)]);
  });

  it('keeps a blocked port out until its retry is due, then looks again; backoff doubles up to 10 s', () => {
    const blocked = new Map<number, Blocked>([[2024, { app: 'bad', error: 'rejected', failures: 1, retryAt: 1000 }]]);
    expect(listenersToLeaveOut(routes, { held: new Set(), busy: new Set(), blocked, now: 999 }).get(2024)?.error).toBe('rejected');
    expect(listenersToLeaveOut(routes, { held: new Set(), busy: new Set(), blocked, now: 1000 })).toEqual(new Map());
    expect([1, 2, 3, 4, 5, 9].map((f) => blockedBackoffMs(f))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    // Blind (no host port table): each retry is a rejected load that leaks in Caddy, so up to 5 min.
    expect([5, 9, 10, 1000].map((f) => blockedBackoffMs(f, BLIND_CAP_MS))).toEqual([16_000, 256_000, 300_000, 300_000]);
    const again = nextBlocked(blocked, new Map([[2024, { app: 'bad', error: 'still taken' }]]), 1000);
    expect(again.get(2024)).toEqual({ app: 'bad', error: 'still taken', failures: 2, retryAt: 3000 });
    // Not due: kept as it is; freed: gone.
    expect(nextBlocked(again, new Map([[2024, { app: 'bad', error: 'x' }]]), 2000)).toEqual(again);
    expect(nextBlocked(again, new Map(), 3000)).toEqual(new Map());
  });

  it('asks for a full pass when a retry is due or a blocked listener is no longer wanted', () => {
    const blocked = new Map<number, Blocked>([[2024, { app: 'bad', error: 'x', failures: 1, retryAt: 1000 }]]);
    expect(blockedNeedsLook(blocked, routes, 999)).toBe(false);
    expect(blockedNeedsLook(blocked, routes, 1000)).toBe(true);
    expect(blockedNeedsLook(blocked, [port('web', 8080)], 0)).toBe(true);
    expect(blockedNeedsLook(new Map(), routes, 0)).toBe(false);
  });
});

/** Loads like Caddy: a config whose listener is on a taken port is rejected whole (counted). */
function caddyLike(taken: Set<number>) {
  let loaded: Route[] = [];
  let rejected = 0;
  const proxy: Proxy & { loaded(): Route[]; rejected(): number } = {
    async apply(routes) {
      const bad = routes.find((r) => r.mode === 'port' && taken.has(r.port!));
      if (bad) {
        rejected++;
        throw new ProxyBindError(`Caddy rejected the config (HTTP 400): listening on :${bad.port}: listen tcp :${bad.port}: bind: address already in use`, bad.port!);
      }
      loaded = routes;
    },
    async serves(routes) {
      return JSON.stringify(routes) === JSON.stringify(loaded);
    },
    async heldPorts() {
      return new Set(loaded.flatMap((r) => (r.mode === 'port' ? [r.port!] : [])));
    },
    async upstreamRequests() {
      return new Map();
    },
    loaded: () => loaded,
    rejected: () => rejected,
  };
  return proxy;
}

describe('proxy reconciler with a taken port', () => {
  let db: Db;
  let now: number;
  const enqueue = recordingEnqueue();
  const routeError = (id: number) => getAppWithDeployVersion(db, id)!.app.routeError;
  beforeEach(() => {
    db = memoryDb();
    now = 1_000_000;
  });
  const build = (proxy: Proxy, busy?: Set<number>) => {
    const held = createHeldPorts();
    const rec = createProxyReconciler({
      db, proxy, log: silentLogger, now: () => now, held,
      dns: { sync: async () => {} },
      ensureDnsResponder: async () => 'running',
      listening: busy && (() => busy),
    });
    return { rec, held };
  };

  it('a load rejected for one port: the other routes load without it, the app shows the error, and the route comes back once the port is free', async () => {
    const taken = new Set([2024]);
    const proxy = caddyLike(taken);
    const { rec, held } = build(proxy); // no pre-check: the rejection path
    const bad = createApp(db, enqueue, { name: 'bad', fallbackPort: 2024 }, 'rest');
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    createApp(db, enqueue, { name: 'site', accessMode: 'domain', domain: 'a.example.com' }, 'rest');

    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(proxy.loaded().map((r) => r.app)).toEqual(['site', 'web']);
    expect(proxy.rejected()).toBe(1);
    expect(routeError(bad.id)).toMatch(/could not listen on port 2024 .*address already in use/);
    expect(routeError(web.id)).toBeNull();
    expect([...held.get()]).toEqual([8080]);

    // Another app's change still reaches the proxy; the bad listener stays out without another rejection
    // until its retry is due.
    createApp(db, enqueue, { name: 'api', fallbackPort: 8081 }, 'rest');
    await rec.reconcile('main');
    expect(proxy.loaded().map((r) => r.app)).toEqual(['api', 'site', 'web']);
    expect(proxy.rejected()).toBe(1);

    // Due while still taken: one more rejection, a longer wait (2 s).
    now += 1000;
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(proxy.rejected()).toBe(2);
    now += 1000;
    await rec.reconcile('main');
    expect(proxy.rejected()).toBe(2);

    // Freed: at the next due pass the route is back and the error is gone.
    taken.clear();
    now += 1000;
    await rec.reconcile('main');
    expect(proxy.loaded().map((r) => r.app)).toEqual(['api', 'bad', 'site', 'web']);
    expect(routeError(bad.id)).toBeNull();
    const loaded = proxy.loaded();
    await rec.reconcile('main');
    expect(proxy.loaded()).toBe(loaded);
  });

  it('a port the host shows taken is left out before any load (no rejected load, nothing leaks in Caddy); deleting the app clears it', async () => {
    const busy = new Set([2024]);
    const proxy = caddyLike(busy);
    const { rec } = build(proxy, busy);
    const bad = createApp(db, enqueue, { name: 'bad', fallbackPort: 2024 }, 'rest');
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(proxy.loaded().map((r) => r.app)).toEqual(['web']);
    expect(proxy.rejected()).toBe(0);
    expect(routeError(bad.id)).toBe(takenMessage(2024));

    // Many passes while it stays taken: still no rejected load.
    for (let i = 0; i < 20; i++) {
      now += 700;
      await rec.reconcile('main');
    }
    expect(proxy.rejected()).toBe(0);

    deleteApp(db, enqueue, bad.id);
    await rec.reconcile('main');
    expect(proxy.loaded().map((r) => r.app)).toEqual(['web']);
    // Steady afterwards: no full pass is asked for.
    now += 60_000;
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
  });

  it('comes back no later than the retry time when the probe interval is longer', async () => {
    const busy = new Set([2024]);
    const proxy = caddyLike(busy);
    const rec = createProxyReconciler({
      db, proxy, log: silentLogger, now: () => now, probeMs: 60_000,
      dns: { sync: async () => {} }, ensureDnsResponder: async () => 'running', listening: () => busy,
    });
    createApp(db, enqueue, { name: 'bad', fallbackPort: 2024 }, 'rest');
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: 1000 });
  });
});
