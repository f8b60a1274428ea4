// The proxy pass asks Caddy only when something may have changed (trust.ts): the same routes, the same
// Caddy process and less than the trust period since its last `true` answer mean it still serves them.
// A fake of the Proxy port that counts questions and loads, over a real `:memory:` SQLite for the
// reconciler cases, and a fake clock.
import { beforeEach, describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { createApp } from '../../support/commands.js';
import { silentLogger } from '../../../src/log.js';
import { createProxyReconciler, PROXY_PROBE_MS } from '../../../src/reconcilers/proxy/reconciler.js';
import { caddyIdentity, PROXY_TRUST_MS, trustedProxy } from '../../../src/proxy/trust.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import type { RuntimeEvent } from '../../../src/runtime/runtime.js';

/** A Caddy: what it has loaded (lost when it "restarts" empty), how often it was asked and loaded. */
function fakeCaddy() {
  let loaded: string | undefined;
  const c = {
    asked: 0,
    loads: 0,
    restartEmpty: () => void (loaded = undefined),
    proxy: {
      async serves(routes: Route[]) {
        c.asked++;
        return loaded === JSON.stringify(routes);
      },
      async apply(routes: Route[]) {
        if (loaded !== JSON.stringify(routes)) c.loads++;
        loaded = JSON.stringify(routes);
      },
      async upstreamRequests() {
        return new Map<string, number>();
      },
    } satisfies Proxy,
  };
  return c;
}

const route = (app: string, port: number): Route => ({ app, mode: 'port', port, upstream: { kind: 'none' } });

describe('trustedProxy', () => {
  let now: number;
  let pid: string;
  let caddy: ReturnType<typeof fakeCaddy>;
  let proxy: Proxy;
  beforeEach(() => {
    now = 1_000_000;
    pid = '100/0';
    caddy = fakeCaddy();
    proxy = trustedProxy(caddy.proxy, { identity: () => pid, now: () => now });
  });

  it('asks Caddy once while the routes and the process stay the same, and again after the trust period', async () => {
    const routes = [route('web', 8080)];
    await proxy.apply(routes);
    for (let i = 0; i < 29; i++, now += 1000) expect(await proxy.serves(routes)).toBe(true);
    expect(caddy.asked).toBe(1);
    now += PROXY_TRUST_MS - 29_000; // the safety look
    expect(await proxy.serves(routes)).toBe(true);
    expect(caddy.asked).toBe(2);
  });

  it('asks again when the Caddy process changed, when the routes are another array, and after a load', async () => {
    const routes = [route('web', 8080)];
    await proxy.apply(routes);
    await proxy.serves(routes);
    pid = '101/0'; // restarted by its guard
    await proxy.serves(routes);
    expect(caddy.asked).toBe(2);
    await proxy.serves([route('web', 8080)]); // equal, but not the array the reconciler keeps while the database is unchanged
    expect(caddy.asked).toBe(3);
    await proxy.apply(routes);
    await proxy.serves(routes);
    expect(caddy.asked).toBe(4);
  });

  it('never trusts a `false`', async () => {
    const routes = [route('web', 8080)];
    expect(await proxy.serves(routes)).toBe(false);
    expect(await proxy.serves(routes)).toBe(false);
    expect(caddy.asked).toBe(2);
  });

  it('through the proxy reconciler: a Caddy restarted with an empty config gets it again at the next pass, with no GET a second before', async () => {
    const db = memoryDb();
    createApp(db, recordingEnqueue(), { name: 'web', fallbackPort: 8080 }, 'rest');
    const rec = createProxyReconciler({ db, proxy, dns: { sync: async () => {} }, ensureDnsResponder: async () => 'running', ensureProxyRunning: async () => 'running', log: silentLogger, now: () => now });
    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(caddy.loads).toBe(1);
    for (let i = 0; i < 10; i++, now += PROXY_PROBE_MS) await rec.reconcile('main');
    expect(caddy.asked).toBe(1); // one look after the load, then trusted

    caddy.restartEmpty();
    pid = '101/0';
    await rec.reconcile('main');
    expect(caddy.loads).toBe(2);
    // Steady again: the next passes load nothing and ask once.
    const asked = caddy.asked;
    for (let i = 0; i < 3; i++, now += PROXY_PROBE_MS) await rec.reconcile('main');
    expect(caddy.loads).toBe(2);
    expect(caddy.asked).toBe(asked + 1);
  });
});

describe('caddyIdentity', () => {
  const ev = (labels: Record<string, string>, action = 'die'): RuntimeEvent => ({ action, id: 'c1', name: 'svc-proxy', labels }) as RuntimeEvent;

  it('moves with each event of this instance\'s proxy container, and with nothing else', () => {
    const id = caddyIdentity({ dataDir: '/nonexistent-svc-data', instance: 'svc' });
    const before = id.identity();
    expect(before).toBe('none/0'); // no host Caddy pid file
    id.note(ev({ 'svc.role': 'app', 'svc.instance': 'svc', 'svc.app': 'web' }));
    id.note(ev({ 'svc.role': 'proxy', 'svc.instance': 'other' }));
    expect(id.identity()).toBe(before);
    id.note(ev({ 'svc.role': 'proxy', 'svc.instance': 'svc' }));
    expect(id.identity()).not.toBe(before);
  });
});
