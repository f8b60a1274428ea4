// Edge nodes as the proxy sees them (docs/decisions/0043-edge-nodes.md, 0047-swarm-edge-resolves.md): the configs
// an edge node's Caddy and relay get (pure), and the fleet that loads them and writes the resolver's hosts files
// through the manager's relay and each node's agent, against a fake of that way in: an HTTP server on a unix
// socket (the relay's agent socket) that answers as the named node's Caddy admin APIs and engine archive
// endpoint would. A switch writes files, never loads a config; a node that does not answer never holds a switch.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCaddyConfig, canonicalJson, fingerprintOf, type CaddyConfigOptions } from '../../../src/proxy/config.js';
import { buildEdgeConfig, edgeNodeProxyConfig, edgeNodeRelayConfig, edgePaths } from '../../../src/proxy/edge-config.js';
import { createEdgeFleet } from '../../../src/proxy/edge-nodes.js';
import type { EdgeTarget as EdgeFleetTarget } from '../../../src/runtime/swarm-edges.js';
import { Header } from 'tar';
import { filesOfTar, hostsFiles, hostsTar } from '../../../src/dns/hosts.js';
import type { Route } from '../../../src/proxy/proxy.js';
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
    expect(cfg.apps.http.servers['port-8080'].routes[0].handle[0]).toMatchObject({ upstreams: [{ dial: 'unix//svc-edge/relay-a.sock' }], headers: { request: { set: { 'Svc-Edge-Route': ['web.svc.internal:3000'] } } } });
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

  it("the relay: the manager relay's routes on its own sockets in the volume, resolving through the node's resolver, no agent server", () => {
    const relay = edgeNodeRelayConfig([web, site], 'prod', 'node0123456789abcdef') as any;
    const paths = edgePaths('/var/lib/svc');
    const manager = buildEdgeConfig([web, site], 'prod-edge-dns-node01234567', { socket: paths.socket, adminSocket: paths.adminSocket, agentSocket: paths.agentSocket }) as any;
    expect(relay.apps.http.servers.edge.routes).toEqual(manager.apps.http.servers.edge.routes);
    expect(relay.apps.http.servers.edge.routes[0].handle[0].dynamic_upstreams.resolver).toEqual({ addresses: ['udp/prod-edge-dns-node01234567:53'] });
    expect(relay.apps.http.servers.edge.listen).toEqual(['unix//svc-edge/relay-a.sock']);
    expect(relay.apps.http.servers.agents).toBeUndefined();
    expect(relay.admin.listen).toBe('unix//svc-edge/relay-admin-a.sock');
    expect(fingerprintOf(edgeNodeRelayConfig([web, site], 'prod', 'other'))).not.toBe(fingerprintOf(relay));
  });
});

type Part = 'proxy' | 'relay';
/** What a fake node's Caddy and relay hold, its resolver's files, and every request its agent got. */
interface FakeNode {
  configs: { proxy?: string; relay?: string };
  /** The hosts files in the resolver's volume. */
  files: Map<string, string>;
  /** Parts whose admin socket is not there (their agent answers 502). */
  down: Part[];
  /** In-flight requests the relay reports. */
  busy: number;
  /** Ports its Caddy cannot bind. */
  taken: number[];
  hang?: boolean;
}

/** The engine's archive of a directory: its entries under the directory's base name. */
const archiveOf = (files: Map<string, string>) =>
  Buffer.concat([
    ...[...files].flatMap(([name, text]) => {
      const h = new Header({ path: `svc-edge-dns/${name}`, type: 'File', mode: 0o644, size: Buffer.byteLength(text), mtime: new Date(0) });
      h.encode();
      return [h.block!, Buffer.from(text), Buffer.alloc((512 - (Buffer.byteLength(text) % 512)) % 512)];
    }),
    Buffer.alloc(1024),
  ]);

describe('the fleet', () => {
  let dir: string;
  let server: Server;
  let nodes: Record<string, FakeNode>;
  const seen: string[] = [];
  const targets: EdgeFleetTarget[] = [];
  const fresh = (): FakeNode => ({ configs: {}, files: new Map(), taken: [], down: [], busy: 0 });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-edge-nodes-'));
    nodes = { '10.0.9.1:2380': fresh(), '10.0.9.2:2380': fresh() };
    seen.length = 0;
    targets.length = 0;
    targets.push({ nodeId: 'n1', hostname: 'edge-1', agent: '10.0.9.1:2380', container: 'c1' });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const node = nodes[String(req.headers['svc-agent-dial'])];
        seen.push(`${req.method} ${req.url} key=${req.headers['svc-agent-key'] === KEY}`);
        if (!node) return void res.writeHead(502).end();
        if (node.hang) return; // never answers (a node just lost)
        const archive = /^\/containers\/([^/]+)\/archive\?path=(.*)$/.exec(req.url ?? '');
        if (archive) {
          if (!['c1', 'c2'].includes(archive[1]!)) return void res.writeHead(404).end('{"message":"No such container: x"}');
          if (decodeURIComponent(archive[2]!) !== '/svc-edge-dns') return void res.writeHead(400).end();
          if (req.method === 'GET') return void res.writeHead(200).end(archiveOf(node.files));
          if (req.method === 'PUT') {
            for (const [name, text] of filesOfTar(body)) {
              node.files.set(name, text);
              seen.push(`wrote ${name}${text ? '' : ' (empty)'}`);
            }
            return void res.writeHead(200).end();
          }
          return void res.writeHead(400).end();
        }
        const m = /^\/svc-edge\/(proxy|relay)(\/.*)$/.exec(req.url ?? '');
        if (!m) return void res.writeHead(403).end();
        const part = m[1] as Part;
        if (node.down.includes(part)) return void res.writeHead(502).end();
        const have = node.configs[part];
        const text = body.toString('latin1');
        if (req.method === 'GET' && m[2] === '/config/') return void res.writeHead(200).end(have ?? 'null');
        if (req.method === 'GET' && m[2]!.startsWith('/id/')) return void res.writeHead(have && have.includes(`"${m[2]!.split('/')[2]}"`) ? 200 : 404).end();
        if (req.method === 'GET' && m[2] === '/reverse_proxy/upstreams') return void res.writeHead(200).end(JSON.stringify([{ address: '10.0.1.9:3000', num_requests: node.busy }]));
        if (req.method === 'POST' && m[2] === '/load') {
          const port = node.taken.find((p) => part === 'proxy' && text.includes(`":${p}"`));
          if (port) return void res.writeHead(400).end(`{"error":"loading config: loading new config: http app module: start: listening on :${port}: listen tcp :${port}: bind: address already in use"}`);
          node.configs[part] = text;
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

  const fleet = () => createEdgeFleet({ targets: async () => targets, agentSocket: join(dir, 'agent.sock'), key: KEY, instance: 'prod', hosts: { files: hostsFiles, tar: hostsTar, read: filesOfTar }, proxy: opts, log: silentLogger, switchWaitMs: 300 });
  const loaded = (agent: string, part: Part) => JSON.parse(nodes[agent]!.configs[part] ?? 'null');
  const steps = () => seen.filter((s) => s.startsWith('loaded') || s.startsWith('wrote'));
  const n1 = () => nodes['10.0.9.1:2380']!;

  it('a new node: its answers written, its relay then its Caddy loaded, through its agent with the key; a look with nothing changed does nothing', async () => {
    const f = fleet();
    await f.setRecords(records);
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual(['wrote site.svc.internal', 'wrote web.svc.internal', 'loaded relay', 'loaded proxy']);
    expect(n1().files).toEqual(hostsFiles(records));
    expect(loaded('10.0.9.1:2380', 'relay')).toEqual(edgeNodeRelayConfig([web], 'prod', 'n1'));
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([web], opts));
    expect(seen.filter((s) => /^(GET|POST|PUT) /.test(s)).every((s) => s.endsWith('key=true'))).toBe(true);
    const n = seen.length;
    f.check();
    await f.idle();
    expect(steps().length).toBe(4);
    expect(seen.slice(n).every((s) => s.startsWith('GET /svc-edge/'))).toBe(true);
  });

  it('a switch writes the files that changed and loads nothing; a name gone is emptied (NXDOMAIN); the files are read once per agent container', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    await f.setRecords(records);
    seen.length = 0;
    await f.setRecords({ ...records, 'web.svc.internal.': ['10.0.1.11'] });
    expect(steps()).toEqual(['wrote web.svc.internal']);
    seen.length = 0;
    await f.setRecords({ 'web.svc.internal.': ['10.0.1.11'] });
    expect(steps()).toEqual(['wrote site.svc.internal (empty)']);
    expect(n1().files.get('site.svc.internal')).toBe('');
    seen.length = 0;
    await f.setRecords({ 'web.svc.internal.': ['10.0.1.11'] });
    expect(seen).toEqual([]);
    // Another agent container (its task replaced): the files are read again through it.
    targets[0] = { ...targets[0]!, container: 'c2' };
    f.invalidate();
    await f.idle();
    expect(seen.filter((s) => s.startsWith('GET /containers/c2/archive')).length).toBe(1);
    expect(steps()).toEqual([]);
  });

  it('a relay that is down does not stop the answers; it is loaded at the next look once it answers', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    n1().down = ['relay'];
    n1().configs.relay = undefined;
    seen.length = 0;
    await f.setRecords(records);
    expect(steps()).toEqual(['wrote site.svc.internal', 'wrote web.svc.internal']);
    f.check();
    await f.idle();
    expect(steps()).not.toContain('loaded relay');
    n1().down = [];
    f.check();
    await f.idle();
    expect(steps()).toContain('loaded relay');
  });

  it('after a daemon restart the files are read back: nothing written or loaded that is there', async () => {
    n1().files = hostsFiles(records);
    n1().configs.relay = JSON.stringify(edgeNodeRelayConfig([web], 'prod', 'n1'));
    n1().configs.proxy = JSON.stringify(edgeNodeProxyConfig([web], opts));
    const f = fleet();
    await f.setRecords(records);
    f.setRoutes([web]);
    await f.idle();
    expect(steps()).toEqual([]);
  });

  it('a Caddy emptied or restarted (another config) is loaded again at the next look', async () => {
    const f = fleet();
    f.setRoutes([web]);
    await f.idle();
    n1().configs.proxy = undefined;
    f.check();
    await f.idle();
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([web], opts));
  });

  it('a node that does not answer never holds a switch; one without a reachable agent is not asked; the drain counts the relays that answer', async () => {
    targets.push({ nodeId: 'n2', hostname: 'edge-2', agent: '10.0.9.2:2380', container: 'c1' }, { nodeId: 'n3', hostname: 'edge-3', why: 'the node is down' });
    const f = fleet();
    f.setRoutes([web]);
    await waitFor(() => loaded('10.0.9.1:2380', 'proxy') !== null, { timeoutMs: 5000, what: 'node 1 loaded' });
    nodes['10.0.9.2:2380']!.hang = true;
    const t0 = Date.now();
    await f.setRecords(records);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(n1().files).toEqual(hostsFiles(records));
    n1().busy = 2;
    expect(await f.upstreamRequests()).toEqual(new Map([['10.0.1.9:3000', 2]]));
  });

  it('a port the node cannot bind is left out there; its other routes load', async () => {
    n1().taken = [8080];
    const f = fleet();
    const other: Route = { ...web, app: 'other', port: 8090 };
    f.setRoutes([web, other]);
    await f.idle();
    expect(loaded('10.0.9.1:2380', 'proxy')).toEqual(edgeNodeProxyConfig([other], opts));
  });
});
