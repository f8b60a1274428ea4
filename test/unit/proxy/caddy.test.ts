import { describe, expect, it } from 'vitest';
import { createCaddyProxy, ProxyBindError, ProxyLoadError, ProxyUnreachableError } from '../../../src/proxy/caddy.js';
import type { Route } from '../../../src/proxy/proxy.js';
import { createServer, type AddressInfo } from 'node:net';
import { silentLogger } from '../../../src/log.js';
import { fixedCaddyWatch, OLDEST_FEATURES, type CaddyFeatures, type CaddyWatch } from '../../../src/proxy/caddy-version.js';

/** A tiny in-memory Caddy admin API: keeps the loaded config, records requests. */
function fakeAdmin(initial: unknown = null) {
  let config: unknown = initial;
  const calls: string[] = [];
  let rejectLoads = false;
  let upstreams: unknown = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    calls.push(`${method} ${url.pathname}`);
    if (method === 'GET' && url.pathname === '/config/') return Response.json(config);
    if (method === 'POST' && url.pathname === '/load') {
      if (rejectLoads) return new Response('{"error":"loading config: bad"}', { status: 400 });
      config = JSON.parse(String(init?.body));
      return new Response(null, { status: 200 });
    }
    if (url.pathname === '/reverse_proxy/upstreams') return Response.json(upstreams);
    const id = /^\/id\/([^/]+)\/http_port$/.exec(url.pathname)?.[1];
    const http = (config as { apps?: { http?: { '@id'?: string; http_port?: number } } } | null)?.apps?.http;
    if (id && http?.['@id'] === id) return Response.json(http.http_port);
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
  return {
    fetchFn,
    calls,
    loads: () => calls.filter((c) => c === 'POST /load').length,
    set rejectLoads(v: boolean) {
      rejectLoads = v;
    },
    set upstreams(v: unknown) {
      upstreams = v;
    },
  };
}

/** A loopback port nothing listens on (just released). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });

// A fixed Caddy: the default watch would ask whatever process listens on this machine's port 2019.
const base = { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'acme' as const, dnsPort: 5353, log: silentLogger, watch: fixedCaddyWatch(OLDEST_FEATURES) };
const routes: Route[] = [{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 } }];

describe('caddy adapter', () => {
  it('loads the config of the Caddy it finds, even after serves() built one before it knew', async () => {
    const admin = fakeAdmin();
    let now: CaddyFeatures = OLDEST_FEATURES;
    const watch: CaddyWatch = { features: async () => (now = { resendsBodies: true, streamCloseDelay: true, requestBuffers: true }), known: () => now };
    const p = createCaddyProxy({ ...base, fetch: admin.fetchFn, watch });
    expect(await p.serves(routes)).toBe(false);
    await p.apply(routes);
    const handler = (c: unknown) => (c as { apps: { http: { servers: Record<string, { routes: { handle: { transport: unknown }[] }[] }> } } }).apps.http.servers['port-8080'].routes[0].handle[0];
    const loaded = await (await admin.fetchFn('http://127.0.0.1:2019/config/')).json();
    expect(handler(loaded).transport).toEqual({ protocol: 'http', dial_timeout: '500ms' });
    expect(await p.serves(routes)).toBe(true);
  });

  it('loads once, then applying the same routes loads nothing', async () => {
    const admin = fakeAdmin();
    const p = createCaddyProxy({ ...base, fetch: admin.fetchFn });
    await p.apply(routes);
    await p.apply([...routes]);
    expect(admin.loads()).toBe(1);
    await p.apply([]);
    expect(admin.loads()).toBe(2);
  });

  it('a restarted daemon does not reload what Caddy already has (keys in another order)', async () => {
    const loaded = createCaddyProxy({ ...base }).configFor(routes);
    const reordered = JSON.parse(JSON.stringify(loaded, Object.keys(loaded as object).reverse()));
    const admin = fakeAdmin({ ...reordered, ...(loaded as object) });
    await createCaddyProxy({ ...base, fetch: admin.fetchFn }).apply(routes);
    expect(admin.calls).toEqual(['GET /config/']);
  });

  it('re-applies after Caddy restarted with an empty config', async () => {
    const admin = fakeAdmin();
    const p = createCaddyProxy({ ...base, fetch: admin.fetchFn });
    await p.apply(routes);
    const fresh = fakeAdmin(null);
    await createCaddyProxy({ ...base, fetch: fresh.fetchFn }).apply(routes);
    expect(fresh.loads()).toBe(1);
  });

  it('serves: one small GET of the config fingerprint; false once Caddy lost the config or is unreachable', async () => {
    const admin = fakeAdmin();
    const p = createCaddyProxy({ ...base, fetch: admin.fetchFn });
    expect(await p.serves(routes)).toBe(false);
    await p.apply(routes);
    admin.calls.length = 0;
    expect(await p.serves(routes)).toBe(true);
    expect(admin.calls).toHaveLength(1);
    expect(admin.calls[0]).toMatch(/^GET \/id\/svc-[0-9a-f]{16}\/http_port$/);
    expect(await p.serves([])).toBe(false); // other routes: another fingerprint
    const port = await closedPort();
    expect(await createCaddyProxy({ ...base, adminUrl: `http://127.0.0.1:${port}` }).serves(routes)).toBe(false);
  });

  it('reports a rejected config with Caddy\'s message', async () => {
    const admin = fakeAdmin();
    admin.rejectLoads = true;
    const err = await createCaddyProxy({ ...base, fetch: admin.fetchFn }).apply(routes).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ProxyLoadError);
    expect((err as Error).message).toMatch(/HTTP 400.*loading config: bad/);
  });

  it('says clearly when the admin API is unreachable', async () => {
    const port = await closedPort();
    const p = createCaddyProxy({ ...base, adminUrl: `http://127.0.0.1:${port}` });
    const err = await p.apply(routes).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ProxyUnreachableError);
    expect((err as Error).message).toContain(`Caddy admin API at http://127.0.0.1:${port} is unreachable (ECONNREFUSED)`);
    expect(await p.waitReady(50)).toBe(false);
  });

  it('maps upstreams to in-flight counts by address', async () => {
    const admin = fakeAdmin();
    admin.upstreams = [
      { address: '10.0.0.2:3000', num_requests: 2, fails: 0 },
      { address: '10.0.0.3:3000', num_requests: 0, fails: 0 },
    ];
    const m = await createCaddyProxy({ ...base, fetch: admin.fetchFn }).upstreamRequests();
    expect([...m]).toEqual([
      ['10.0.0.2:3000', 2],
      ['10.0.0.3:3000', 0],
    ]);
    admin.upstreams = null;
    expect((await createCaddyProxy({ ...base, fetch: admin.fetchFn }).upstreamRequests()).size).toBe(0);
  });
});

describe('CaddyProxy and taken ports (issue 18)', () => {
  it('a load rejected for a taken port throws ProxyBindError naming it; heldPorts lists the listeners Caddy has', async () => {
    const routes: Route[] = [{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }];
    let reject = true;
    const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      if (init?.method === 'POST' && path === '/load' && reject) {
        return new Response('{"error":"loading config: loading new config: http app module: start: listening on :8080: listen tcp :8080: bind: address already in use"}', { status: 400 });
      }
      if (path === '/config/') return Response.json({ apps: { http: { servers: { 'port-9000': { listen: [':9000'] } } } } });
      return new Response(null, { status: 200 });
    }) as typeof fetch;
    const p = createCaddyProxy({ ...base, fetch: fetchFn });
    const err = await p.apply(routes).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProxyBindError);
    expect((err as ProxyBindError).port).toBe(8080);
    reject = false;
    await p.apply(routes);
    expect(await p.heldPorts!()).toEqual(new Set([9000]));
  });
});
