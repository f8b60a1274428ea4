import type { DnsRecords } from '../../../src/dns/hosts.js';
// The proxy reconciler and the DNS record sync, with a fake Proxy and fake responder/container starters
// over a real `:memory:` SQLite. Routes come from the app rows; deploys only move DNS answers.
import { describe, it, expect, beforeEach } from 'vitest';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { settle } from '../../support/fake-clock.js';
import { silentLogger } from '../../../src/log.js';
import { createProxyReconciler, PROXY_PROBE_MS, STARTING_RETRY_MS } from '../../../src/reconcilers/proxy/reconciler.js';
import { createDnsSync, type DnsSync } from '../../../src/reconcilers/proxy/dns-sync.js';
import { getAppByName } from '../../../src/store/apps.js';
import { appInstances, apps } from '../../../src/store/schema/index.js';
import type { Reconciler } from '../../../src/controller/types.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import type { Db } from '../../../src/store/db.js';
import { createApp, deleteApp, setEnv, updateApp } from '../../support/commands.js';
import { observeApp, observeInstance } from '../../../src/observed/apps.js';
import { createDeploy, updateDeploy } from '../../../src/store/deploys.js';

let db: Db;
const enqueue = recordingEnqueue();
const again = { requeueAfterMs: PROXY_PROBE_MS };

/** A Proxy that keeps what is loaded and counts real loads (the port's contract: same routes, no load). */
function fakeProxy() {
  let loaded: string | undefined;
  const applied: Route[][] = [];
  let loads = 0;
  let fail: Error | undefined;
  const proxy: Proxy & { applied: Route[][]; loads(): number; current(): Route[] | undefined; failWith(e?: Error): void; restartEmpty(): void } = {
    async serves(routes) {
      return !fail && loaded === JSON.stringify(routes);
    },
    async apply(routes) {
      applied.push(routes);
      if (fail) throw fail;
      const json = JSON.stringify(routes);
      if (json !== loaded) {
        loaded = json;
        loads++;
      }
    },
    async upstreamRequests() {
      return new Map();
    },
    applied,
    loads: () => loads,
    current: () => (loaded === undefined ? undefined : JSON.parse(loaded)),
    failWith: (e) => void (fail = e),
    restartEmpty: () => void (loaded = undefined),
  };
  return proxy;
}

/** A deferred promise, to hold a write open while the test looks. */
function deferred() {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const sealer = testSealer();
const setLive = (name: string, liveAddress: string | null) => observeApp(db, getAppByName(db, name)!.id, { liveAddress });

beforeEach(() => {
  db = memoryDb();
});

describe('proxy reconciler', () => {
  let proxy: ReturnType<typeof fakeProxy>;
  let order: string[];
  let writes: DnsRecords[];
  let dns: DnsSync;
  let rec: Reconciler;
  let containerFailure: Error | undefined;

  const build = (containerMode: boolean) =>
    createProxyReconciler({
      db,
      proxy: new OrderedProxy(proxy, order),
      dns: { sync: async () => (order.push('dns'), dns.sync()) },
      ensureDnsResponder: async () => void order.push('responder'),
      ensureProxyRunning: containerMode
        ? async () => {
            order.push('container');
            if (containerFailure) throw containerFailure;
          }
        : undefined,
      log: silentLogger,
    });

  // Records the order of apply among the other steps.
  class OrderedProxy implements Proxy {
    constructor(private inner: ReturnType<typeof fakeProxy>, private log: string[]) {}
    apply(routes: Route[]) {
      this.log.push('apply');
      return this.inner.apply(routes);
    }
    upstreamRequests() {
      return this.inner.upstreamRequests();
    }
    serves(routes: Route[]) {
      this.log.push('serves');
      return this.inner.serves(routes);
    }
  }

  beforeEach(() => {
    proxy = fakeProxy();
    order = [];
    writes = [];
    containerFailure = undefined;
    dns = createDnsSync(db, (records) => void writes.push(records));
    rec = build(true);
  });

  it('serves exactly the routes of the apps: port, domain and external upstreams, sorted; then steady', async () => {
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    createApp(db, enqueue, { name: 'api', accessMode: 'domain', domain: 'api.example.com', internalPort: 8000 }, 'rest');
    createApp(db, enqueue, { name: 'ext', fallbackPort: 8090, appType: 'external_service', source: 'http://10.1.2.3:9000' }, 'rest');
    setLive('web', '10.0.0.2');

    expect(await rec.reconcile('main')).toEqual(again);
    expect(order).toEqual(['responder', 'dns', 'container', 'apply']);
    expect(proxy.current()).toEqual([
      // No live container and no deploy under way: the 503 page, at once.
      { app: 'api', mode: 'domain', domain: 'api.example.com', upstream: { kind: 'none' } },
      { app: 'ext', mode: 'port', port: 8090, upstream: { kind: 'url', url: 'http://10.1.2.3:9000' }, drainSeconds: 30 },
      { app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 },
    ]);
    expect(writes).toEqual([{ 'web.svc.internal.': '10.0.0.2' }]);

    // Steady: the responder and Caddy's fingerprint are looked at, nothing is applied, no DNS write.
    order.length = 0;
    expect(await rec.reconcile('main')).toEqual(again);
    expect(order).toEqual(['responder', 'dns', 'serves']);
    expect(proxy.applied).toHaveLength(1);
    expect(proxy.loads()).toBe(1);
    expect(writes).toHaveLength(1);
  });

  it('an app with no container answers 503 until its first deploy begins; a failed first deploy brings the 503 back; a live one keeps its DNS route', async () => {
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    const dnsRoute = { app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 };
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }]);
    // The deploy is queued: the route waits for its container (dynamic upstream) before the switch comes.
    const first = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:1', trigger: 'manual' });
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([dnsRoute]);
    updateDeploy(db, undefined, first.id, { status: 'failed' });
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }]);
    // Live: the DNS route, and later deploys (switches) never change it.
    const second = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:1', trigger: 'manual' });
    setLive('web', '10.0.0.2');
    updateDeploy(db, undefined, second.id, { status: 'success' });
    await rec.reconcile('main');
    const loads = proxy.loads();
    const third = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:2', trigger: 'manual' });
    setLive('web', '10.0.0.3');
    updateDeploy(db, undefined, third.id, { status: 'success' });
    await rec.reconcile('main');
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([dnsRoute]);
    expect(proxy.loads()).toBe(loads);
  });

  it("slot 0's replica without an address (healing after its node was lost) keeps the DNS route while other replicas answer", async () => {
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    const first = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:1', trigger: 'manual' });
    updateDeploy(db, undefined, first.id, { status: 'success' });
    setLive('web', '10.0.0.2');
    setLive('web', null);
    db.insert(appInstances).values({ appId: web.id, slot: 1, deployId: first.id, containerName: 'web-1', address: '10.0.0.7' }).run();
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 }]);
    expect(writes.at(-1)).toEqual({ 'web.svc.internal.': '10.0.0.7' });
    // No replica with an address at all: the 503 page.
    db.update(appInstances).set({ address: null }).run();
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }]);
  });

  it('the first replica out of the answer (healing beside the others) keeps the DNS route: the others serve', async () => {
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    const d = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:1', trigger: 'manual' });
    updateDeploy(db, undefined, d.id, { status: 'success' });
    setLive('web', '10.0.0.2');
    observeInstance(db, web.id, 1, { deployId: d.id, containerName: 'web-1-r1', address: '10.0.0.3' });
    await rec.reconcile('main');
    const loads = proxy.loads();
    setLive('web', null);
    await rec.reconcile('main');
    expect(writes.at(-1)).toEqual({ 'web.svc.internal.': '10.0.0.3' });
    // No 503 route, and no config load (a load closes every idle client keep-alive).
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 }]);
    expect(proxy.loads()).toBe(loads);
  });

  it('a lone live container out of the answer while it is healed keeps the DNS route (no 503 page, no config load); scaled to 0 it is the 503 page', async () => {
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    const d = createDeploy(db, enqueue, undefined, { appId: web.id, appName: 'web', imageRef: 'img:1', trigger: 'manual' });
    updateDeploy(db, undefined, d.id, { status: 'success' });
    observeApp(db, web.id, { liveContainerName: 'web-1', liveDeployId: d.id, liveAddress: '10.0.0.2' });
    await rec.reconcile('main');
    const loads = proxy.loads();
    setLive('web', null);
    await rec.reconcile('main');
    expect(writes.at(-1)).toEqual({});
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 }]);
    expect(proxy.loads()).toBe(loads);
    db.update(apps).set({ replicas: 0 }).run();
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }]);
  });

  it('a deploy (new live address) changes the DNS answer, never the proxy config; a routing change does', async () => {
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    setLive('web', '10.0.0.2');
    await rec.reconcile('main');
    setLive('web', '10.0.0.3');
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(1);
    expect(writes).toEqual([{ 'web.svc.internal.': '10.0.0.2' }, { 'web.svc.internal.': '10.0.0.3' }]);

    const web = db.select().from(apps).where(eq(apps.name, 'web')).get()!;
    updateApp(db, enqueue, web.id, { fallbackPort: 8081 });
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(2);
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8081, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 }, drainSeconds: 30 }]);

    await rec.reconcile('main');
    expect(proxy.loads()).toBe(2);
    expect(writes).toHaveLength(2);
  });

  it('deleted apps lose their route and their DNS answer', async () => {
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    const old = createApp(db, enqueue, { name: 'old', fallbackPort: 8081 }, 'rest');
    setLive('web', '10.0.0.2');
    setLive('old', '10.0.0.5');
    await rec.reconcile('main');
    expect(proxy.current()!.map((r) => r.app)).toEqual(['old', 'web']);

    deleteApp(db, enqueue, old.id);
    deleteApp(db, enqueue, web.id);
    await rec.reconcile('main');
    expect(proxy.current()).toEqual([]);
    expect(writes.at(-1)).toEqual({});

    const loads = proxy.loads();
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(loads);
    expect(writes).toHaveLength(2);
  });

  it('external mode (no proxy container) skips the container step', async () => {
    rec = build(false);
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    await rec.reconcile('main');
    expect(order).toEqual(['responder', 'dns', 'apply']);
    expect(proxy.current()).toHaveLength(1);
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(1);
  });

  it('a failure throws (the work queue backs off) and applies nothing; the next pass converges', async () => {
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    containerFailure = new Error('proxy image missing');
    await expect(rec.reconcile('main')).rejects.toThrow('proxy image missing');
    expect(proxy.applied).toEqual([]);

    containerFailure = undefined;
    proxy.failWith(new Error('admin API unreachable'));
    await expect(rec.reconcile('main')).rejects.toThrow('admin API unreachable');
    proxy.failWith(undefined);
    expect(await rec.reconcile('main')).toEqual(again);
    expect(proxy.loads()).toBe(1);
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(1);
  });
});

describe('proxy reconciler: an idle pass reads nothing again (docs/decisions/0023-idle-footprint.md)', () => {
  it('hands the proxy the same routes array while nothing is written, and the new routes right after a write', async () => {
    const seen: Route[][] = [];
    const proxy = fakeProxy();
    const rec = createProxyReconciler({
      db,
      proxy: { ...proxy, serves: (r) => (seen.push(r), proxy.serves(r)), apply: (r) => proxy.apply(r), upstreamRequests: () => proxy.upstreamRequests() },
      dns: createDnsSync(db, () => {}),
      ensureDnsResponder: async () => {},
      log: silentLogger,
    });
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    await rec.reconcile('main');
    await rec.reconcile('main');
    await rec.reconcile('main');
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]); // not re-read, not rebuilt
    // A write that changes no route (an env var): the same array still, so the proxy compares nothing again.
    setEnv(db, sealer, enqueue, getAppByName(db, 'web')!.id, { key: 'FOO', value: 'bar' }, null);
    await rec.reconcile('main');
    expect(seen.at(-1)).toBe(seen[0]);
    updateApp(db, enqueue, getAppByName(db, 'web')!.id, { fallbackPort: 8081 });
    expect(await rec.reconcile('main')).toEqual(again);
    expect(proxy.current()).toEqual([{ app: 'web', mode: 'port', port: 8081, upstream: { kind: 'none' } }]);
    // Steady again on the new routes.
    await rec.reconcile('main');
    expect(seen.at(-1)).not.toBe(seen[0]);
    expect(proxy.loads()).toBe(2);
  });
});

describe('proxy reconciler: the data plane repairs itself', () => {
  it('Caddy restarted with an empty config is noticed on the next probe pass and loaded again', async () => {
    const proxy = fakeProxy();
    let responderChecks = 0;
    const rec = createProxyReconciler({
      db,
      proxy,
      dns: createDnsSync(db, () => {}),
      ensureDnsResponder: async () => void responderChecks++,
      ensureProxyRunning: async () => {},
      log: silentLogger,
    });
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    // Every pass asks to be run again after the probe interval: no event is needed to notice a fault.
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(proxy.loads()).toBe(1);

    proxy.restartEmpty();
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(2);
    expect(proxy.current()).toHaveLength(1);
    await rec.reconcile('main');
    expect(proxy.loads()).toBe(2);
    expect(responderChecks).toBe(4); // the responder is checked on every pass, the cheap ones too
  });
});

describe('proxy reconciler: nothing waits inside a pass (DESIGN.md rule 3)', () => {
  it('a starting responder or Caddy brings the pass back soon; nothing is applied until Caddy answers; then steady', async () => {
    const proxy = fakeProxy();
    let responder: 'running' | 'starting' = 'starting';
    let caddy: 'running' | 'starting' = 'starting';
    const rec = createProxyReconciler({
      db,
      proxy,
      dns: createDnsSync(db, () => {}),
      ensureDnsResponder: async () => responder,
      ensureProxyRunning: async () => caddy,
      log: silentLogger,
    });
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: STARTING_RETRY_MS });
    expect(proxy.applied).toEqual([]);
    caddy = 'running';
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: STARTING_RETRY_MS }); // the responder still starts
    expect(proxy.loads()).toBe(1);
    responder = 'running';
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(proxy.applied).toHaveLength(1);
  });
});

describe('dns sync', () => {
  it('writes only when the records change', async () => {
    const writes: DnsRecords[] = [];
    const dns = createDnsSync(db, (r) => void writes.push(r));
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    createApp(db, enqueue, { name: 'api', fallbackPort: 8081 }, 'rest');

    await dns.sync();
    expect(writes).toEqual([{}]);
    await dns.sync();
    expect(writes).toHaveLength(1);

    setLive('web', '10.0.0.2');
    await dns.sync();
    await dns.sync();
    expect(writes).toEqual([{}, { 'web.svc.internal.': '10.0.0.2' }]);

    setLive('api', '10.0.0.3');
    setLive('web', '10.0.0.4');
    await dns.sync();
    expect(writes.at(-1)).toEqual({ 'api.svc.internal.': '10.0.0.3', 'web.svc.internal.': '10.0.0.4' });
    setLive('web', null);
    await dns.sync();
    expect(writes.at(-1)).toEqual({ 'api.svc.internal.': '10.0.0.3' });
    expect(writes).toHaveLength(4);
  });

  it('is serialized: a sync waits for the write before it, and the newest view is written last', async () => {
    const writes: { records: DnsRecords; done: ReturnType<typeof deferred> }[] = [];
    let open = 0;
    let maxOpen = 0;
    const dns = createDnsSync(db, async (records) => {
      const done = deferred();
      writes.push({ records, done });
      open++;
      maxOpen = Math.max(maxOpen, open);
      await done.promise;
      open--;
    });
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    setLive('web', '10.0.0.2');

    const first = dns.sync();
    await settle();
    setLive('web', '10.0.0.3');
    const second = dns.sync();
    await settle();
    expect(writes.map((w) => w.records)).toEqual([{ 'web.svc.internal.': '10.0.0.2' }]); // the second waits

    writes[0].done.resolve();
    await first;
    await settle();
    expect(writes.map((w) => w.records)).toEqual([{ 'web.svc.internal.': '10.0.0.2' }, { 'web.svc.internal.': '10.0.0.3' }]);
    writes[1].done.resolve();
    await second;
    expect(maxOpen).toBe(1);
  });

  it('a failed write is retried by the next sync, and does not block the ones after it', async () => {
    const writes: DnsRecords[] = [];
    let failNext = true;
    const dns = createDnsSync(db, (r) => {
      writes.push(r);
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
    });
    createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    setLive('web', '10.0.0.2');
    await expect(dns.sync()).rejects.toThrow('disk full');
    await dns.sync();
    expect(writes).toEqual([{ 'web.svc.internal.': '10.0.0.2' }, { 'web.svc.internal.': '10.0.0.2' }]);
    await dns.sync();
    expect(writes).toHaveLength(2);
  });
});
