// The Swarm edge's pure parts (relay config, the routes the host's Caddy gets, the relay's container plan)
// and the wrapper that slots it in (edge-proxy.ts) over fakes of the Proxy port and the relay.
import { describe, expect, it } from 'vitest';
import { buildCaddyConfig, EDGE_ROUTE_HEADER } from '../../../src/proxy/config.js';
import { buildEdgeConfig, edgeKey, edgePaths, viaEdge } from '../../../src/proxy/edge-config.js';
import { directEdge, relayedEdge, type ProxyParts } from '../../../src/proxy/edge-proxy.js';
import { edgeRelaySpec, planEdgeRelay } from '../../../src/proxy/edge-relay.js';
import { createEdgeRelays, type EdgeRelay } from '../../../src/proxy/edge-relays.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proxyContainerSpec } from '../../../src/proxy/container.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import type { DnsRecords } from '../../../src/dns/hosts.js';

const paths = edgePaths('/var/lib/svc');
/** Relay A's config paths (its listener, admin and the agent server). */
const relayA = { ...paths.relays.a, agentSocket: paths.agentSocket };
const web: Route = { app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 } };
const site: Route = { app: 'site', mode: 'domain', domain: 'site.example', upstream: { kind: 'dns', name: 'site.svc.internal.', port: 80 } };
const ext: Route = { app: 'ext', mode: 'port', port: 8081, upstream: { kind: 'url', url: 'http://10.9.9.9:80' } };
const off: Route = { app: 'off', mode: 'port', port: 8082, upstream: { kind: 'none' } };
const records: DnsRecords = { 'web.svc.internal.': ['10.0.1.9', '10.0.1.10'], 'site.svc.internal.': '10.0.1.4' };

type Handler = { upstreams: { dial: string }[]; headers: { request: { delete: string[] } } };
const relayRoutes = (cfg: unknown) => (cfg as { apps: { http: { servers: { edge: { routes: { match?: { header: Record<string, string[]> }[]; handle: Handler[] }[] } } } } }).apps.http.servers.edge.routes;

describe('the edge relay config', () => {
  it('one route per DNS upstream, matched by its key, to every task address; a 502 for anything else', () => {
    const routes = relayRoutes(buildEdgeConfig([web, site, ext, off], records, relayA));
    expect(routes).toHaveLength(3);
    expect(routes[0]!.match![0]!.header).toEqual({ [EDGE_ROUTE_HEADER]: ['site.svc.internal:80'] });
    expect(routes[0]!.handle[0]!.upstreams).toEqual([{ dial: '10.0.1.4:80' }]);
    expect(routes[1]!.match![0]!.header).toEqual({ [EDGE_ROUTE_HEADER]: ['web.svc.internal:3000'] });
    expect(routes[1]!.handle[0]!.upstreams).toEqual([{ dial: '10.0.1.10:3000' }, { dial: '10.0.1.9:3000' }]);
    expect(routes[1]!.handle[0]!.headers.request.delete).toEqual([EDGE_ROUTE_HEADER]);
    expect(routes[2]).toMatchObject({ handle: [{ handler: 'static_response', status_code: 502 }] });
  });

  it('listens on the unix socket only, admin on the other socket; deterministic; the id follows the addresses', () => {
    const a = buildEdgeConfig([web, site], records, relayA);
    expect(JSON.stringify(buildEdgeConfig([site, web], { ...records }, relayA))).toBe(JSON.stringify(a));
    expect(a).toMatchObject({ admin: { listen: `unix/${relayA.adminSocket}` }, apps: { http: { servers: { edge: { listen: [`unix/${relayA.socket}`] } } } } });
    const b = buildEdgeConfig([web, site], { ...records, 'web.svc.internal.': ['10.0.1.11'] }, relayA) as { apps: { http: { '@id': string } } };
    expect(b.apps.http['@id']).not.toBe((a as { apps: { http: { '@id': string } } }).apps.http['@id']);
  });

  it('an app with no live address has an empty upstream list (the relay retries, then answers 502)', () => {
    expect(relayRoutes(buildEdgeConfig([web], {}, relayA))[0]!.handle[0]!.upstreams).toEqual([]);
  });
});

describe('the routes the host Caddy gets', () => {
  it('DNS upstreams go to the relay socket with their key; the others are unchanged', () => {
    const out = viaEdge([web, ext, off], paths.socket);
    expect(out[0]!.upstream).toEqual({ kind: 'edge', socket: paths.socket, key: edgeKey({ name: 'web.svc.internal.', port: 3000 }) });
    expect(out.slice(1)).toEqual([ext, off]);
  });

  it("the host's handler dials the unix socket and sets the key header (a client's own value is overwritten)", () => {
    const cfg = buildCaddyConfig(viaEdge([web], paths.socket), { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'internal', dnsPort: 5353 }) as any;
    const h = cfg.apps.http.servers['port-8080'].routes[0].handle[0];
    expect(h).toMatchObject({ handler: 'reverse_proxy', upstreams: [{ dial: `unix/${paths.socket}` }], headers: { request: { set: { [EDGE_ROUTE_HEADER]: ['web.svc.internal:3000'] } } } });
    expect(cfg.apps.http.servers['port-8080'].listen).toEqual([':8080']);
  });

  it('the host never reuses an idle connection to the relay (a reload closes those) and never asks it to close', () => {
    const cfg = buildCaddyConfig(viaEdge([web], paths.socket), { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'internal', dnsPort: 5353 }) as any;
    const h = cfg.apps.http.servers['port-8080'].routes[0].handle[0];
    expect(h.transport).toEqual({ protocol: 'http', keep_alive: { max_idle_conns_per_host: -1 } });
  });

  it('a data directory too long for a unix socket path is refused with the setting named', () => {
    expect(() => edgePaths(`/${'d'.repeat(120)}`)).toThrow(/SVC_DATA_DIR is too long/);
  });
});

describe('the relay containers', () => {
  const specOf = (id: 'a' | 'b') => edgeRelaySpec({ image: 'caddy:2', instance: 'svc', network: 'svc', id, dir: paths.dir, paths: paths.relays[id], user: '1000:1000' });
  const spec = specOf('a');
  it('on the overlay, as svc user, the socket directory at the same path, caddy run --resume', () => {
    expect(spec).toMatchObject({
      name: 'svc-edge',
      network: 'svc',
      user: '1000:1000',
      cmd: ['run', '--resume', '--config', paths.relays.a.bootstrap],
      mounts: [{ source: paths.dir, target: paths.dir }],
      labels: { 'svc.role': 'edge', 'svc.instance': 'svc' },
    });
    expect(spec.hostNetwork).toBeUndefined();
  });

  it('A and B: own names, bootstrap, sockets and XDG dirs (never one --resume autosave for both)', () => {
    const b = specOf('b');
    expect(b.name).toBe('svc-edge-b');
    expect(b.cmd).toEqual(['run', '--resume', '--config', '/var/lib/svc/edge/bootstrap-b.json']);
    expect(spec.env).toEqual({ XDG_DATA_HOME: '/var/lib/svc/edge/a/data', XDG_CONFIG_HOME: '/var/lib/svc/edge/a/config', HOME: '/var/lib/svc/edge/a' });
    expect(b.env).toEqual({ XDG_DATA_HOME: '/var/lib/svc/edge/b/data', XDG_CONFIG_HOME: '/var/lib/svc/edge/b/config', HOME: '/var/lib/svc/edge/b' });
    expect(paths.relays).toEqual({
      a: { socket: '/var/lib/svc/edge/relay-a.sock', adminSocket: '/var/lib/svc/edge/admin-a.sock', bootstrap: '/var/lib/svc/edge/bootstrap-a.json', home: '/var/lib/svc/edge/a' },
      b: { socket: '/var/lib/svc/edge/relay-b.sock', adminSocket: '/var/lib/svc/edge/admin-b.sock', bootstrap: '/var/lib/svc/edge/bootstrap-b.json', home: '/var/lib/svc/edge/b' },
    });
    expect(paths.socket).toBe('/var/lib/svc/edge/relay.sock');
  });

  it('plan: create, start, none, recreate on a changed spec; refuses a container that is not ours', () => {
    const found = (labels: Record<string, string>, running = true) => ({ id: 'x', name: 'svc-edge', image: 'caddy:2', labels, state: running ? 'running' : 'exited', running, health: 'none' }) as const;
    expect(planEdgeRelay(undefined, spec)).toBe('create');
    expect(planEdgeRelay(found(spec.labels), spec)).toBe('none');
    expect(planEdgeRelay(found(spec.labels, false), spec)).toBe('start');
    expect(planEdgeRelay(found({ ...spec.labels, 'svc.edge-spec': 'old' }), spec)).toBe('recreate');
    expect(() => planEdgeRelay(found({}), spec)).toThrow(/did not create/);
  });

  it("the proxy container's spec is unchanged without extra mounts (one engine), recreated with them (Swarm)", () => {
    const base = { image: 'caddy:2', adminUrl: 'http://127.0.0.1:2019', dataDir: '/var/lib/svc', instance: 'svc' };
    expect(proxyContainerSpec({ ...base, mounts: [] })).toEqual(proxyContainerSpec(base));
    const swarm = proxyContainerSpec({ ...base, mounts: [{ source: paths.dir, target: paths.dir }] });
    expect(swarm.mounts).toContainEqual({ source: paths.dir, target: paths.dir });
    expect(swarm.labels['svc.proxy-spec']).not.toBe(proxyContainerSpec(base).labels['svc.proxy-spec']);
  });
});

describe('the edge wrapper', () => {
  const calls: string[] = [];
  const host: Proxy = {
    apply: async (routes) => void calls.push(`host ${routes.map((r) => r.upstream.kind).join(',')}`),
    serves: async () => true,
    upstreamRequests: async () => new Map([['10.0.1.9:3000', 1]]),
  };
  const relay: EdgeRelay = {
    ensureRunning: async () => 'running',
    applyRoutes: async (routes) => void calls.push(`relay ${routes.length}`),
    setRecords: async (r) => void calls.push(`records ${Object.keys(r).length}`),
    serves: async () => false,
    upstreamRequests: async () => new Map([['10.0.1.9:3000', 2], ['10.0.1.10:3000', 1]]),
  };
  const parts: ProxyParts = { routes: host, drain: host, writeDns: async () => void calls.push('hosts files'), ensureRunning: async () => 'running' };

  it('on one engine the parts are used as they are', () => {
    expect(directEdge(parts)).toBe(parts);
  });

  it('the relay learns the routes before the host Caddy sends to it; DNS answers go to both; the drain adds both counts', async () => {
    const e = relayedEdge(relay, paths.socket)(parts);
    calls.length = 0;
    await e.routes.apply([web, ext]);
    await e.writeDns(records);
    expect(calls).toEqual(['relay 2', 'host edge,url', 'hosts files', 'records 2']);
    expect(await e.drain.upstreamRequests()).toEqual(new Map([['10.0.1.9:3000', 3], ['10.0.1.10:3000', 1]]));
    expect(await e.routes.serves([web])).toBe(false); // the relay does not serve them yet
  });

  it('"running" only when the host Caddy and the relay both run', async () => {
    expect(await relayedEdge(relay, paths.socket)(parts).ensureRunning!()).toBe('running');
    expect(await relayedEdge({ ...relay, ensureRunning: async () => 'starting' }, paths.socket)(parts).ensureRunning!()).toBe('starting');
    expect(await relayedEdge(relay, paths.socket)({ ...parts, ensureRunning: undefined }).ensureRunning!()).toBe('running');
  });
});

describe("the relay's agent server (docs/decisions/0041-node-agents.md)", () => {
  const agents = (cfg: unknown) => (cfg as { apps: { http: { servers: { agents: any } } } }).apps.http.servers.agents;

  it('listens on its own socket beside relay.sock, in every config the relay loads, routes or not', () => {
    expect(paths.agentSocket).toBe('/var/lib/svc/edge/agent.sock');
    expect(agents(buildEdgeConfig([], {}, relayA)).listen).toEqual(['unix//var/lib/svc/edge/agent.sock']);
    expect(agents(buildEdgeConfig([web], records, relayA))).toEqual(agents(buildEdgeConfig([], {}, relayA)));
  });

  it('dials the agent named by the header (an IPv4 task address on the agent port only), else 403', () => {
    const [pass, , deny] = agents(buildEdgeConfig([], {}, relayA)).routes;
    const pattern = new RegExp(pass.match[0].header_regexp['Svc-Agent-Dial'].pattern);
    expect(pass.handle[0]).toMatchObject({ handler: 'reverse_proxy', upstreams: [{ dial: '{http.request.header.Svc-Agent-Dial}' }], transport: { dial_timeout: '3s' }, headers: { request: { delete: ['Svc-Agent-Dial'] } } });
    for (const ok of ['10.0.1.5:2380', '192.168.200.17:2380']) expect(pattern.test(ok)).toBe(true);
    for (const bad of ['10.0.1.5:2375', '10.0.1.5', 'localhost:2380', '[::1]:2380', 'unix//var/run/docker.sock', '10.0.1.5:2380/x', '10.0.1.5:23800']) expect(pattern.test(bad)).toBe(false);
    expect(deny).toMatchObject({ handle: [{ handler: 'static_response', status_code: 403 }] });
  });

  it("dials a managed service's admin port (Garage's 3903: its bucket and key setup on a Swarm), no other", () => {
    const [, admin] = agents(buildEdgeConfig([], {}, relayA)).routes;
    const pattern = new RegExp(admin.match[0].header_regexp['Svc-Agent-Dial'].pattern);
    expect(admin.handle[0]).toMatchObject({ handler: 'reverse_proxy', upstreams: [{ dial: '{http.request.header.Svc-Agent-Dial}' }], transport: { dial_timeout: '3s' }, headers: { request: { delete: ['Svc-Agent-Dial'] } } });
    expect(pattern.test('10.0.1.5:3903')).toBe(true);
    for (const bad of ['10.0.1.5:3900', '10.0.1.5:39030', 'garage:3903', '10.0.1.5:3903/x', '10.0.1.5:2375']) expect(pattern.test(bad)).toBe(false);
  });

  it("keeps the agents' key out of the relay's log (it passes through the agent server)", () => {
    expect((buildEdgeConfig([], {}, relayA) as any).logging.logs.default.encoder.fields).toEqual({ 'request>headers>Svc-Agent-Key': { filter: 'delete' } });
  });
});

describe('a relay that is down', () => {
  it('a switch still completes (the addresses wait for the relay), the drain counts nothing through it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-edge-'));
    try {
      const relay = createEdgeRelays({ runtime: new FakeRuntime(), image: 'caddy:2', instance: 'svc', network: 'svc', paths: edgePaths(dir), user: '0:0', log: silentLogger });
      await expect(relay.applyRoutes([web])).rejects.toThrow(/unreachable/);
      await expect(relay.setRecords(records)).resolves.toBeUndefined();
      expect(await relay.upstreamRequests()).toEqual(new Map());
      expect(await relay.serves([web])).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
