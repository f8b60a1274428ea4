// The Swarm edge's pure parts (relay config, the routes the host's Caddy gets, the relay's container plan)
// and the wrapper that slots it in (edge-proxy.ts) over fakes of the Proxy port and the relay.
import { describe, expect, it } from 'vitest';
import { buildCaddyConfig, EDGE_ROUTE_HEADER } from '../../../src/proxy/config.js';
import { buildEdgeConfig, EDGE_DIAL_TIMEOUT, EDGE_TRY_DURATION, edgeKey, edgePaths, viaEdge } from '../../../src/proxy/edge-config.js';
import { hostsFiles, hostsTar, filesOfTar } from '../../../src/dns/hosts.js';
import { resolverArgs } from '../../../src/runtime/resolver-spec.js';
import { directEdge, relayedEdge, type ProxyParts } from '../../../src/proxy/edge-proxy.js';
import { createEdgeRelay, edgeRelaySpecs, planEdgeContainer, upstreamCounts, type EdgeRelay } from '../../../src/proxy/edge-relay.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proxyContainerSpec } from '../../../src/proxy/container.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import type { DnsRecords } from '../../../src/dns/hosts.js';

const paths = edgePaths('/var/lib/svc');
/** The relay's config paths (its listener, admin and the agent server), and its resolver's name. */
const relayA = { socket: paths.socket, adminSocket: paths.adminSocket, agentSocket: paths.agentSocket };
const resolver = 'svc-edge-dns';
const web: Route = { app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 } };
const site: Route = { app: 'site', mode: 'domain', domain: 'site.example', upstream: { kind: 'dns', name: 'site.svc.internal.', port: 80 } };
const ext: Route = { app: 'ext', mode: 'port', port: 8081, upstream: { kind: 'url', url: 'http://10.9.9.9:80' } };
const off: Route = { app: 'off', mode: 'port', port: 8082, upstream: { kind: 'none' } };
const records: DnsRecords = { 'web.svc.internal.': ['10.0.1.9', '10.0.1.10'], 'site.svc.internal.': '10.0.1.4' };

type Handler = { upstreams?: unknown; dynamic_upstreams: Record<string, unknown>; headers: { request: { delete: string[] } } };
const relayRoutes = (cfg: unknown) => (cfg as { apps: { http: { servers: { edge: { routes: { match?: { header: Record<string, string[]> }[]; handle: Handler[] }[] } } } } }).apps.http.servers.edge.routes;

describe('the edge relay config', () => {
  it('one route per DNS upstream, matched by its key, resolving its name through the resolver; a 502 for anything else', () => {
    const routes = relayRoutes(buildEdgeConfig([web, site, ext, off], resolver, relayA));
    expect(routes).toHaveLength(3);
    expect(routes[0]!.match![0]!.header).toEqual({ [EDGE_ROUTE_HEADER]: ['site.svc.internal:80'] });
    expect(routes[0]!.handle[0]!.dynamic_upstreams).toEqual({ source: 'a', name: 'site.svc.internal.', port: '80', refresh: '25ms', resolver: { addresses: ['udp/svc-edge-dns:53'] }, dial_timeout: '1s' });
    expect(routes[0]!.handle[0]!.upstreams).toBeUndefined();
    expect(routes[1]!.match![0]!.header).toEqual({ [EDGE_ROUTE_HEADER]: ['web.svc.internal:3000'] });
    expect(routes[1]!.handle[0]!.dynamic_upstreams).toMatchObject({ name: 'web.svc.internal.', port: '3000' });
    expect(routes[1]!.handle[0]!.headers.request.delete).toEqual([EDGE_ROUTE_HEADER]);
    expect(routes[2]).toMatchObject({ handle: [{ handler: 'static_response', status_code: 502 }] });
  });

  it('listens on the unix socket only, admin on the other socket; deterministic; the id follows the routes and the resolver only', () => {
    const a = buildEdgeConfig([web, site], resolver, relayA);
    expect(JSON.stringify(buildEdgeConfig([site, web], resolver, relayA))).toBe(JSON.stringify(a));
    expect(a).toMatchObject({ admin: { listen: `unix/${relayA.adminSocket}` }, apps: { http: { servers: { edge: { listen: [`unix/${relayA.socket}`] } } } } });
    const id = (c: unknown) => (c as { apps: { http: { '@id': string } } }).apps.http['@id'];
    expect(id(buildEdgeConfig([web], resolver, relayA))).not.toBe(id(a));
    expect(id(buildEdgeConfig([web, site], 'other-dns', relayA))).not.toBe(id(a));
  });

  it('a GET that picks dead task addresses one after another (a worker lost) has time for a live one (issue 35)', () => {
    const h = relayRoutes(buildEdgeConfig([web], resolver, relayA))[0]!.handle[0]! as unknown as {
      load_balancing: { try_duration: string; try_interval: string; retries?: number };
      transport: { protocol: string; dial_timeout: string };
      health_checks: { passive: { fail_duration: string; max_fails: number } };
    };
    const seconds = (d: string) => Number(d.replace(/s$/, ''));
    expect(h.transport).toEqual({ protocol: 'http', dial_timeout: EDGE_DIAL_TIMEOUT });
    expect(h.load_balancing).toEqual({ selection_policy: { policy: 'round_robin' }, try_duration: EDGE_TRY_DURATION, try_interval: '100ms' });
    expect(h.load_balancing.retries).toBeUndefined(); // a count would cut the try short
    // Four dead picks in a row (each a dial timeout, then the 100 ms interval) end within the try.
    expect(4 * (seconds(EDGE_DIAL_TIMEOUT) + 0.1)).toBeLessThan(seconds(EDGE_TRY_DURATION));
    // A dial whose SYN was retransmitted once (after 1 s) is not cut short.
    expect(seconds(EDGE_DIAL_TIMEOUT)).toBeGreaterThan(1);
    expect(h.health_checks.passive).toEqual({ fail_duration: '10s', max_fails: 1 });
  });

  it('the relay reads a small request body whole before it dials a task (an app that answers first never resets the client)', () => {
    const h = relayRoutes(buildEdgeConfig([web], resolver, relayA))[0]!.handle[0]! as unknown as { request_buffers: number };
    expect(h.request_buffers).toBe(64 * 1024);
  });

});

describe("the resolver's answers", () => {
  it('dnsmasq on the hosts directory, only svc.internal, no cache; keeps its user only where asked (the manager: svc-owned mode-600 files)', () => {
    expect(resolverArgs('/d')).toEqual(['--conf-file=/dev/null', '--keep-in-foreground', '--port=53', '--no-resolv', '--no-hosts', '--local=/svc.internal/', '--cache-size=0', '--hostsdir=/d', '--log-facility=-', '--pid-file=']);
    expect(resolverArgs('/d', true)[0]).toBe('--user=root');
  });

  it("the tar for another node's resolver: changed files only, an emptied file for a name gone (NXDOMAIN), nothing when equal; read back", () => {
    const wanted = hostsFiles(records);
    const first = hostsTar(wanted, new Map())!;
    expect(filesOfTar(first)).toEqual(wanted);
    expect(hostsTar(wanted, filesOfTar(first))).toBeUndefined();
    const next = hostsFiles({ 'web.svc.internal.': ['10.0.1.11'] });
    expect(filesOfTar(hostsTar(next, wanted)!)).toEqual(new Map([['site.svc.internal', ''], ['web.svc.internal', '10.0.1.11 web.svc.internal\n']]));
    expect(hostsTar(new Map(), new Map([['site.svc.internal', '']]))).toBeUndefined();
  });

  it('counts in-flight requests by address; anything but a JSON list is none', () => {
    expect(upstreamCounts('[{"address":"10.0.1.9:3000","num_requests":2},{"address":"10.0.1.9:3000","num_requests":1},{"address":"x"}]')).toEqual(new Map([['10.0.1.9:3000', 3], ['x', 0]]));
    expect(upstreamCounts('oops')).toEqual(new Map());
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

  it('a host Caddy >= 2.7 sends the relay a small body whole with its headers; 2.6.2 gets no such field', () => {
    const handler = (requestBuffers: boolean) =>
      (buildCaddyConfig(viaEdge([web], paths.socket), { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'internal', dnsPort: 5353, features: { resendsBodies: requestBuffers, streamCloseDelay: requestBuffers, requestBuffers } }) as any).apps.http.servers['port-8080'].routes[0].handle[0];
    expect(handler(true).request_buffers).toBe(64 * 1024);
    expect(handler(false).request_buffers).toBeUndefined();
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
  const specs = (resolverImage?: string) => edgeRelaySpecs({ image: 'caddy:2', resolverImage, instance: 'svc', network: 'svc', hostsDir: '/var/lib/svc/proxy/dns', paths, user: '1000:1000' });
  const [dns, spec] = specs('svc/dnsmasq') as [ReturnType<typeof specs>[0], ReturnType<typeof specs>[0]];
  it('the relay: on the overlay, as svc user, the socket directory at the same path, caddy run --resume; the paths relay A had', () => {
    expect(spec).toMatchObject({
      name: 'svc-edge',
      network: 'svc',
      user: '1000:1000',
      cmd: ['run', '--resume', '--config', '/var/lib/svc/edge/bootstrap-a.json'],
      mounts: [{ source: paths.dir, target: paths.dir }],
      labels: { 'svc.role': 'edge', 'svc.instance': 'svc' },
    });
    expect(spec.env).toEqual({ XDG_DATA_HOME: '/var/lib/svc/edge/a/data', XDG_CONFIG_HOME: '/var/lib/svc/edge/a/config', HOME: '/var/lib/svc/edge/a' });
    expect(paths).toMatchObject({ socket: '/var/lib/svc/edge/relay-a.sock', adminSocket: '/var/lib/svc/edge/admin-a.sock' });
    expect(spec.hostNetwork).toBeUndefined();
  });

  it("the resolver: dnsmasq on the overlay, as svc user, the host responder's hosts files read-only; none without SVC_RESOLVER_IMAGE", () => {
    expect(dns).toMatchObject({ name: 'svc-edge-dns', image: 'svc/dnsmasq', network: 'svc', user: '1000:1000', cmd: resolverArgs('/var/lib/svc/proxy/dns', true), mounts: [{ source: '/var/lib/svc/proxy/dns', target: '/var/lib/svc/proxy/dns', readOnly: true }] });
    expect(() => specs(undefined)).toThrow(/SVC_RESOLVER_IMAGE/);
  });

  it('plan: create, start, none, recreate on a changed spec; refuses a container that is not ours', () => {
    const found = (labels: Record<string, string>, running = true) => ({ id: 'x', name: 'svc-edge', image: 'caddy:2', labels, state: running ? 'running' : 'exited', running, health: 'none' }) as const;
    expect(planEdgeContainer(undefined, spec)).toBe('create');
    expect(planEdgeContainer(found(spec.labels), spec)).toBe('none');
    expect(planEdgeContainer(found(spec.labels, false), spec)).toBe('start');
    expect(planEdgeContainer(found({ ...spec.labels, 'svc.edge-spec': 'old' }), spec)).toBe('recreate');
    expect(() => planEdgeContainer(found({}), spec)).toThrow(/did not create/);
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
    serves: async () => false,
    upstreamRequests: async () => new Map([['10.0.1.9:3000', 2], ['10.0.1.10:3000', 1]]),
  };
  const parts: ProxyParts = { routes: host, drain: host, writeDns: async () => void calls.push('hosts files'), ensureRunning: async () => 'running' };

  it('on one engine the parts are used as they are', () => {
    expect(directEdge(parts)).toBe(parts);
  });

  it('the relay learns the routes before the host Caddy sends to it; DNS answers are the hosts files only; the drain adds both counts', async () => {
    const e = relayedEdge(relay, paths.socket)(parts);
    calls.length = 0;
    await e.routes.apply([web, ext]);
    await e.writeDns(records);
    expect(calls).toEqual(['relay 2', 'host edge,url', 'hosts files']);
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
    expect(agents(buildEdgeConfig([], resolver, relayA)).listen).toEqual(['unix//var/lib/svc/edge/agent.sock']);
    expect(agents(buildEdgeConfig([web], resolver, relayA))).toEqual(agents(buildEdgeConfig([], resolver, relayA)));
  });

  it('dials the agent named by the header (an IPv4 task address on the agent port only), else 403', () => {
    const [pass, , deny] = agents(buildEdgeConfig([], resolver, relayA)).routes;
    const pattern = new RegExp(pass.match[0].header_regexp['Svc-Agent-Dial'].pattern);
    expect(pass.handle[0]).toMatchObject({ handler: 'reverse_proxy', upstreams: [{ dial: '{http.request.header.Svc-Agent-Dial}' }], transport: { dial_timeout: '3s' }, headers: { request: { delete: ['Svc-Agent-Dial'] } } });
    for (const ok of ['10.0.1.5:2380', '192.168.200.17:2380']) expect(pattern.test(ok)).toBe(true);
    for (const bad of ['10.0.1.5:2375', '10.0.1.5', 'localhost:2380', '[::1]:2380', 'unix//var/run/docker.sock', '10.0.1.5:2380/x', '10.0.1.5:23800']) expect(pattern.test(bad)).toBe(false);
    expect(deny).toMatchObject({ handle: [{ handler: 'static_response', status_code: 403 }] });
  });

  it("dials a managed service's admin port (Garage's 3903: its bucket and key setup on a Swarm), no other", () => {
    const [, admin] = agents(buildEdgeConfig([], resolver, relayA)).routes;
    const pattern = new RegExp(admin.match[0].header_regexp['Svc-Agent-Dial'].pattern);
    expect(admin.handle[0]).toMatchObject({ handler: 'reverse_proxy', upstreams: [{ dial: '{http.request.header.Svc-Agent-Dial}' }], transport: { dial_timeout: '3s' }, headers: { request: { delete: ['Svc-Agent-Dial'] } } });
    expect(pattern.test('10.0.1.5:3903')).toBe(true);
    for (const bad of ['10.0.1.5:3900', '10.0.1.5:39030', 'garage:3903', '10.0.1.5:3903/x', '10.0.1.5:2375']) expect(pattern.test(bad)).toBe(false);
  });

  it("keeps the agents' key out of the relay's log (it passes through the agent server)", () => {
    expect((buildEdgeConfig([], resolver, relayA) as any).logging.logs.default.encoder.fields).toEqual({ 'request>headers>Svc-Agent-Key': { filter: 'delete' } });
  });
});

describe('a relay that is down', () => {
  it('a load fails as unreachable, the drain counts nothing through it, it serves nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-edge-'));
    try {
      const relay = createEdgeRelay({ runtime: new FakeRuntime(), image: 'caddy:2', resolverImage: 'svc/dnsmasq', instance: 'svc', network: 'svc', hostsDir: join(dir, 'dns'), paths: edgePaths(dir), user: '0:0', log: silentLogger });
      await expect(relay.applyRoutes([web])).rejects.toThrow(/unreachable/);
      expect(await relay.upstreamRequests()).toEqual(new Map());
      expect(await relay.serves([web])).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
