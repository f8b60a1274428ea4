// Edge nodes as the proxy sees them (docs/decisions/0043-edge-nodes.md): the configs an edge node's
// Caddy and two relays get (pure), and the fleet that loads them through the manager's relay and each node's
// agent, against a fake of that way in: an HTTP server on a unix socket (the relay's agent socket) that
// answers as the named node's Caddy admin APIs and engine archive endpoint would (the `relay.sock` link as a
// tar). A config goes to the standby relay, then the link is swapped; a node that does not answer never holds a switch.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCaddyConfig, canonicalJson, type CaddyConfigOptions } from '../../../src/proxy/config.js';
import { buildEdgeConfig, edgePaths } from '../../../src/proxy/edge-config.js';
import { edgeNodeProxyConfig, edgeNodeRelayConfig, fingerprintOf } from '../../../src/proxy/edge-node-config.js';
import { createEdgeFleet, type EdgeFleetTarget } from '../../../src/proxy/edge-nodes.js';
import { linkTargetOf, symlinkTar } from '../../../src/proxy/edge-node-link.js';
import { relayedEdge, type ProxyParts } from '../../../src/proxy/edge-proxy.js';
import type { EdgeRelay } from '../../../src/proxy/edge-relays.js';
import type { Proxy, Route } from '../../../src/proxy/proxy.js';
import { silentLogger } from '../../../src/log.js';
import { waitFor } from '../../support/wait.js';

const opts: CaddyConfigOptions = { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'acme', acmeEmail: 'ops@example.com', dnsPort: 5353, tlsLog: { caddyPath: '/data/svc-tls.log' }, storageDir: '/data/certs' };
const web: Route = { app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 } };
const site: Route = { app: 'site', mode: 'domain', domain: 'site.example', upstream: { kind: 'dns', name: 'site.svc.internal.', port: 80 } };
const off: Route = { app: 'off', mode: 'port', port: 8082, upstream: { kind: 'none' } };
const records = { 'web.svc.internal.': ['10.0.1.9', '10.0.1.10'], 'site.svc.internal.': '10.0.1.4' };
const KEY = 'ab'.repeat(32);

describe("an edge node's configs", () => {
  const cfg = edgeNodeProxyConfig([web, site, off], opts) as any;

  it("the Caddy: the manager's listeners and TLS policy, every DNS upstream to the node's relay socket, admin on its socket", () => {
    const manager = buildCaddyConfig([web, site, off], opts) as any;
    expect(Object.keys(cfg.apps.http.servers)).toEqual(Object.keys(manager.apps.http.servers));
    expect(cfg.apps.http.servers['port-8080'].listen).toEqual([':8080']);
    expect(cfg.apps.http.servers['port-8080'].routes[0].handle[0]).toMatchObject({ upstreams: [{ dial: 'unix//svc-edge/relay.sock' }], headers: { request: { set: { 'Svc-Edge-Route': ['web.svc.internal:3000'] } } } });
    expect(cfg.apps.http.servers['port-8082'].routes[0].handle[0]).toMatchObject({ handler: 'static_response', status_code: 503 });
    expect(cfg.apps.tls).toEqual(manager.apps.tls);
    expect(cfg.admin).toEqual({ listen: 'unix//svc-edge/proxy-admin.sock', origins: ['svc-edge'] });
    // The manager's TLS log and storage are the manager's: the node keeps its certificates in its volume.
    expect(cfg.logging).toBeUndefined();
    expect(cfg.storage).toBeUndefined();
  });

  it('deterministic, its own fingerprint (not the manager Caddy\'s), another one for other routes', () => {
    expect(canonicalJson(edgeNodeProxyConfig([off, site, web], opts))).toBe(canonicalJson(cfg));
    expect(fingerprintOf(cfg)).toMatch(/^svc-[0-9a-f]{16}$/);
    expect(fingerprintOf(cfg)).not.toBe(fingerprintOf(buildCaddyConfig([web, site, off], opts)));
    expect(fingerprintOf(edgeNodeProxyConfig([web], opts))).not.toBe(fingerprintOf(cfg));
  });

  it("each relay: the manager relay's routes and addresses on its own sockets in the volume, no agent server", () => {
    const relay = edgeNodeRelayConfig([web, site], records, 'a') as any;
    const manager = buildEdgeConfig([web, site], records, edgePaths('/var/lib/svc').relays.a) as any;
    expect(relay.apps.http.servers.edge.routes).toEqual(manager.apps.http.servers.edge.routes);
    expect(relay.apps.http.servers.edge.listen).toEqual(['unix//svc-edge/relay-a.sock']);
    expect(relay.apps.http.servers.agents).toBeUndefined();
    expect(relay.admin.listen).toBe('unix//svc-edge/relay-admin-a.sock');
    const b = edgeNodeRelayConfig([web, site], records, 'b') as any;
    expect(b.apps.http.servers.edge.listen).toEqual(['unix//svc-edge/relay-b.sock']);
    expect(b.admin.listen).toBe('unix//svc-edge/relay-admin-b.sock');
    expect(fingerprintOf(b)).not.toBe(fingerprintOf(relay));
  });
});

describe("the link's tar", () => {
  it('one symlink entry with a relative target, read back; a tar without it (a socket left out) names none', () => {
    const tar = symlinkTar('relay.sock', 'relay-b.sock');
    expect(tar.length).toBe(1536);
    expect(linkTargetOf(tar, 'relay.sock')).toBe('relay-b.sock');
    expect(linkTargetOf(Buffer.alloc(1024), 'relay.sock')).toBeUndefined();
    expect(linkTargetOf(tar, 'other')).toBeUndefined();
  });

  it.each([['../relay-a.sock'], ['/svc-edge/relay-a.sock'], ['a/b'], ['..'], ['']])('refuses the target %j (never outside the volume)', (target) => {
    expect(() => symlinkTar('relay.sock', target)).toThrow(/not a plain/);
  });
});

type Part = 'proxy' | 'relay' | 'relay-b';
/** What a fake node's Caddy and relays hold, its link, and every request its agent got. */
interface FakeNode {
  configs: { proxy?: string; relay?: string; 'relay-b'?: string };
  /** The `relay.sock` link's target; `socket`: the socket file of the single relay of before. */
  link?: string;
  /** `relay.sock.new`, renamed over the link by the swapper's `mv`. */
  newLink?: string;
  /** Relays whose admin socket is not there (their agent answers 502). */
  down: Part[];
  /** In-flight requests each relay reports. */
  busy: Partial<Record<Part, number>>;
  /** Ports its Caddy cannot bind. */
  taken: number[];
  hang?: boolean;
}

describe('the fleet', () => {
  let dir: string;
  let server: Server;
  let nodes: Record<string, FakeNode>;
  const seen: string[] = [];
  const targets: EdgeFleetTarget[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-edge-nodes-'));
    nodes = { '10.0.9.1:2380': { configs: {}, taken: [], down: [], busy: {} }, '10.0.9.2:2380': { configs: {}, taken: [], down: [], busy: {} } };
    seen.length = 0;
    targets.length = 0;
    targets.push({ nodeId: 'n1', hostname: 'edge-1', agent: '10.0.9.1:2380', container: 'c1', swapper: 's1' });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1');
        const node = nodes[String(req.headers['svc-agent-dial'])];
        seen.push(`${req.method} ${req.url} key=${req.headers['svc-agent-key'] === KEY}`);
        if (!node) return void res.writeHead(502).end();
        if (node.hang) return; // never answers (a node just lost)
        const exec = /^\/(containers\/([^/]+)\/exec|exec\/([0-9a-f]{64})\/(start|json))$/.exec(req.url ?? '');
        if (exec) {
          if (req.method === 'POST' && exec[2]) {
            if (exec[2] !== 's1') return void res.writeHead(404).end('{"message":"No such container"}');
            const cmd = JSON.parse(body).Cmd;
            seen.push(`exec ${cmd.join(' ')}`);
            return void res.writeHead(201).end(JSON.stringify({ Id: 'e'.repeat(64) }));
          }
          if (req.method === 'POST' && exec[4] === 'start') return void res.writeHead(200).end();
          // The `mv` ran: the new link replaces the old (a socket file of before too).
          node.link = node.newLink ?? node.link;
          if (node.newLink) seen.push(`link -> ${node.newLink}`);
          node.newLink = undefined;
          return void res.writeHead(200).end(JSON.stringify({ Running: false, ExitCode: 0 }));
        }
        const archive = /^\/containers\/([^/]+)\/archive\?path=(.*)$/.exec(req.url ?? '');
        if (archive) {
          if (!['c1', 'c2', 's1'].includes(archive[1]!)) return void res.writeHead(404).end('{"message":"No such container: x"}');
          const path = decodeURIComponent(archive[2]!);
          if (req.method === 'GET' && path === '/svc-edge/relay.sock') {
            if (!node.link) return void res.writeHead(404).end('{"message":"Could not find the file /svc-edge/relay.sock in container c1"}');
            // The engine leaves a socket file out of its tar.
            return void res.writeHead(200).end(node.link === 'socket' ? Buffer.alloc(1024) : symlinkTar('relay.sock', node.link));
          }
          if (req.method === 'PUT' && path === '/svc-edge') {
            const direct = linkTargetOf(Buffer.concat(chunks), 'relay.sock');
            if (direct) seen.push(`link -> ${direct} (archive)`);
            node.link = direct ?? node.link;
            node.newLink = linkTargetOf(Buffer.concat(chunks), 'relay.sock.new');
            return void res.writeHead(200).end();
          }
          return void res.writeHead(400).end();
        }
        const m = /^\/svc-edge\/(proxy|relay|relay-b)(\/.*)$/.exec(req.url ?? '');
        if (!m) return void res.writeHead(403).end();
        const part = m[1] as Part;
        if (node.down.includes(part)) return void res.writeHead(502).end();
        const have = node.configs[part];
        if (req.method === 'GET' && m[2] === '/config/') return void res.writeHead(200).end(have ?? 'null');
        if (req.method === 'GET' && m[2]!.startsWith('/id/')) return void res.writeHead(have && have.includes(`"${m[2]!.split('/')[2]}"`) ? 200 : 404).end();
        if (req.method === 'GET' && m[2] === '/reverse_proxy/upstreams') return void res.writeHead(200).end(JSON.stringify([{ address: '10.0.1.9:3000', num_requests: node.busy[part] ?? 0 }]));
        if (req.method === 'POST' && m[2] === '/load') {
          const port = node.taken.find((p) => part === 'proxy' && body.includes(`":${p}"`));
          if (port) return void res.writeHead(400).end(`{"error":"loading config: loading new config: http app module: start: listening on :${port}: listen tcp :${port}: bind: address already in use"}`);
          node.configs[part] = body;
          seen.push(`loaded ${part}`);
          return void res.writeHead(200).end();
        }
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(join(dir, 'agent.sock'), r));
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const fleet = () => createEdgeFleet({ targets: async () => targets, agentSocket: join(dir, 'agent.sock'), key: KEY, proxy: opts, log: silentLogger, switchWaitMs: 300, standbyIdleWaitMs: 200 });
  const loaded = (agent: string, part: Part) => JSON.parse(nodes[agent]!.configs[part] ?? 'null');
  const steps = () => seen.filter((s) => s.startsWith('loaded') || s.startsWith('link'));
  const n1 = () => nodes['10.0.9.1:2380']!;

  it("loads relay A of a new node, points its link at it, then loads its Caddy, through its agent with the key; a look with nothing changed loads nothing", async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock', 'loaded proxy']);
    expect(loaded('10.0.9.1:2380', 'relay')).toEqual(edgeNodeRelayConfig([web], {}, 'a'));
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([web], opts));
    expect(seen.filter((s) => /^(GET|POST|PUT) /.test(s)).every((s) => s.endsWith('key=true'))).toBe(true);
    const n = steps().length;
    f.check();
    await f.idle();
    expect(steps().length).toBe(n);
  });

  it('new task addresses go to the standby, then the link is swapped (a new link renamed over it in the swapper): the relay carrying traffic is never loaded', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    seen.length = 0;
    await f.setRecords(records);
    expect(steps()).toEqual(['loaded relay-b', 'link -> relay-b.sock']);
    expect(seen).toContain('exec /bin/busybox mv -f /svc-edge/relay.sock.new /svc-edge/relay.sock');
    expect(loaded('10.0.9.1:2380', 'relay-b')).toEqual(edgeNodeRelayConfig([web], records, 'b'));
    seen.length = 0;
    const next = { ...records, 'web.svc.internal.': ['10.0.1.11'] };
    await f.setRecords(next);
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock']);
    // A flip-back to the addresses the standby already has: only the link moves.
    seen.length = 0;
    await f.setRecords(records);
    expect(steps()).toEqual(['link -> relay-b.sock']);
    // The link is read once (per agent container), then kept: only svc writes it.
    expect(seen.filter((s) => s.startsWith('GET /containers/')).length).toBe(0);
  });

  it("the standby's requests from before the last swap are waited for (bounded), then it is loaded anyway", async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    n1().busy['relay-b'] = 3;
    const t0 = Date.now();
    await f.setRecords(records);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(180);
    expect(seen.filter((s) => s === 'GET /svc-edge/relay-b/reverse_proxy/upstreams key=true').length).toBeGreaterThan(1);
    expect(n1().link).toBe('relay-b.sock');
  });

  it('a standby that is down: the active relay is loaded in place (the link stays); neither up: the node is not loaded and the switch goes on', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    n1().down = ['relay-b'];
    seen.length = 0;
    await f.setRecords(records);
    expect(steps()).toEqual(['loaded relay']);
    expect(n1().link).toBe('relay-a.sock');
    n1().down = ['relay', 'relay-b'];
    seen.length = 0;
    await f.setRecords({});
    expect(steps()).toEqual([]);
    // Both back: the next look loads the standby and swaps.
    n1().down = [];
    f.check();
    await f.idle();
    expect(steps()).toEqual(['loaded relay-b', 'link -> relay-b.sock']);
  });

  it("relays 1 (the bench's baseline, the behaviour before the pair): every load reloads relay A, B is never asked", async () => {
    const f = createEdgeFleet({ targets: async () => targets, agentSocket: join(dir, 'agent.sock'), key: KEY, proxy: opts, log: silentLogger, switchWaitMs: 300, relays: 1 });
    f.setRoutes([web]);
    await f.idle();
    await f.setRecords(records);
    await f.setRecords({});
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock', 'loaded proxy', 'loaded relay', 'loaded relay']);
    expect(seen.some((s) => s.includes('/svc-edge/relay-b/'))).toBe(false);
  });

  it("a node whose swapper does not run yet gets its first link by the archive alone; until it runs, its active relay is loaded in place", async () => {
    targets[0] = { ...targets[0]!, swapper: undefined };
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock (archive)', 'loaded proxy']);
    seen.length = 0;
    await f.setRecords(records);
    // No atomic swap possible: relay A reloaded in place (never left on addresses a switch drains).
    expect(steps()).toEqual(['loaded relay']);
    expect(n1().link).toBe('relay-a.sock');
    targets[0] = { ...targets[0]!, swapper: 's1' };
    f.invalidate();
    await f.idle();
    seen.length = 0;
    await f.setRecords({});
    expect(steps()).toEqual(['loaded relay-b', 'link -> relay-b.sock']);
  });

  it('upgrade: a node whose relay.sock is the socket file of the single relay of before gets a relay loaded, then the link', async () => {
    n1().link = 'socket';
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock', 'loaded proxy']);
    expect(n1().link).toBe('relay-a.sock');
  });

  it("after a daemon restart the link is read back: the active relay keeps serving, the other one is loaded", async () => {
    n1().link = 'relay-b.sock';
    n1().configs['relay-b'] = JSON.stringify(edgeNodeRelayConfig([web], {}, 'b'));
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual(['loaded proxy']);
    seen.length = 0;
    await f.setRecords(records);
    expect(steps()).toEqual(['loaded relay', 'link -> relay-a.sock']);
    // Another agent container (its task replaced): the link is read again through it.
    targets[0] = { ...targets[0]!, container: 'c2' };
    f.invalidate();
    await f.idle();
    expect(seen.filter((s) => s.startsWith('GET /containers/c2/archive')).length).toBe(1);
  });

  it('a Caddy emptied or restarted (another config) is loaded again at the next look', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    nodes['10.0.9.1:2380']!.configs.proxy = undefined;
    f.check();
    await f.idle();
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([web], opts));
  });

  it('a node that does not answer never holds a switch; one without a reachable agent is not asked', async () => {
    targets.push({ nodeId: 'n2', hostname: 'edge-2', agent: '10.0.9.2:2380', container: 'c1', swapper: 's1' }, { nodeId: 'n3', hostname: 'edge-3', why: 'the node is down' });
    const f = fleet();
    f.setRoutes([web]);
    await waitFor(() => loaded('10.0.9.1:2380', 'proxy') !== null, { timeoutMs: 5000, what: 'node 1 loaded' });
    nodes['10.0.9.2:2380']!.hang = true;
    const t0 = Date.now();
    await f.setRecords(records);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(loaded('10.0.9.1:2380', 'relay-b')).toEqual(edgeNodeRelayConfig([web], records, 'b'));
    // The drain counts what both relays of the nodes that answer have in flight.
    n1().busy = { relay: 2, 'relay-b': 1 };
    expect(await f.upstreamRequests()).toEqual(new Map([['10.0.1.9:3000', 3]]));
  });

  it('a port the node cannot bind is left out there; its other routes load', async () => {
    nodes['10.0.9.1:2380']!.taken = [8080];
    const f = fleet();
    const other: Route = { ...web, app: 'other', port: 8090 };
    f.setRoutes([web, other]);
    await f.idle();
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([other], opts));
  });
});

describe('the edge wrapper with edge nodes', () => {
  it('the fleet gets the routes after the manager, the DNS answers after the manager relay (awaited: the switch), and its counts in the drain', async () => {
    const calls: string[] = [];
    const host: Proxy = { apply: async () => void calls.push('host'), serves: async () => true, upstreamRequests: async () => new Map([['10.0.1.9:3000', 1]]) };
    const relay: EdgeRelay = {
      ensureRunning: async () => 'running',
      applyRoutes: async () => void calls.push('relay'),
      setRecords: async () => {
        await new Promise((r) => setTimeout(r, 30));
        calls.push('relay records');
      },
      serves: async () => true,
      upstreamRequests: async () => new Map(),
    };
    const fleet = {
      setRoutes: () => void calls.push('fleet routes'),
      setRecords: async () => {
        calls.push('fleet records');
        await new Promise((r) => setTimeout(r, 20));
        calls.push('fleet records taken');
      },
      upstreamRequests: async () => new Map([['10.0.1.9:3000', 4]]),
      check: () => void calls.push('fleet check'),
      invalidate: () => {},
      idle: async () => {},
    };
    const parts: ProxyParts = { routes: host, drain: host, writeDns: async () => void calls.push('hosts files') };
    const e = relayedEdge(relay, '/var/lib/svc/edge/relay.sock', fleet)(parts);
    await e.routes.apply([web]);
    await e.writeDns(records);
    expect(await e.routes.serves([web])).toBe(true);
    expect(calls).toEqual(['relay', 'host', 'fleet routes', 'hosts files', 'relay records', 'fleet records', 'fleet records taken', 'fleet check']);
    expect(await e.drain.upstreamRequests()).toEqual(new Map([['10.0.1.9:3000', 5]]));
  });
});
