// The proxy data plane for real: a host Caddy driven by the admin adapter, svc's DNS responder, and
// node http upstreams on loopback (127.0.0.1 and 127.0.0.2 share a port, so a DNS flip moves traffic).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, Agent, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createCaddyProxy, type CaddyProxy } from '../../src/proxy/caddy.js';
import { appDnsName, type Route } from '../../src/proxy/proxy.js';
import { ensureDnsResponder } from '../../src/dns/supervise.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { probeDnsResponder, resolveA } from '../../src/dns/query.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { silentLogger } from '../../src/log.js';
import { freePort, startCaddy, type TestCaddy } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';
import { adminFetchAsFetch } from '../support/admin-fetch.js';

let caddy: TestCaddy;
let dir: string;
let hostsDir: string;
let dnsPort: number;
let upPort: number;
const upstreams: Server[] = [];
let loads = 0;

/** The admin requests over node:http (admin-fetch.ts), config loads counted. */
const countingFetch: typeof fetch = (input, init) => {
  if (init?.method === 'POST' && String(input).endsWith('/load')) loads++;
  return adminFetchAsFetch(input, init);
};

async function upstream(host: string, name: string): Promise<Server> {
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(name));
  });
  await new Promise<void>((r) => srv.listen(upPort, host, () => r()));
  upstreams.push(srv);
  return srv;
}

// Stops an upstream the way a container's stop does: every connection goes, busy or not. Closing only the
// idle ones left a connection Caddy had dialled but not yet used open until Caddy's 2-minute idle timeout
// (Node counts it as busy), and the test waited for it. A request still in flight fails, as it should.
const closeServer = (srv: Server) =>
  new Promise<void>((r) => {
    srv.close(() => r());
    srv.closeAllConnections();
  });

async function proxyFor(extra: Partial<Parameters<typeof createCaddyProxy>[0]> = {}): Promise<CaddyProxy> {
  return createCaddyProxy({
    adminUrl: caddy.adminUrl,
    httpPort: await freePort(),
    httpsPort: await freePort(),
    tlsIssuer: 'internal',
    dnsPort,
    log: silentLogger,
    fetch: countingFetch,
    ...extra,
  });
}

const portRoute = (app: string, port: number): Route => ({ app, mode: 'port', port, upstream: { kind: 'dns', name: appDnsName(app), port: upPort } });

/** One request through Caddy; resolves status and body, rejects on connection errors. */
function send(port: number, opts: { method?: string; agent?: Agent; host?: string } = {}) {
  return new Promise<{ status: number; body: string; reused: boolean }>((resolveReq, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: '/', agent: opts.agent, headers: opts.host ? { host: opts.host } : {}, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolveReq({ status: res.statusCode ?? 0, body, reused: req.reusedSocket }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(opts.method === 'POST' ? 'x=1' : undefined);
  });
}

beforeAll(async () => {
  caddy = await startCaddy();
  dir = await mkdtemp(join(tmpdir(), 'svc-test-proxy-'));
  hostsDir = dnsmasqPaths(dir).hostsDir;
  dnsPort = await freePort();
  upPort = await freePort();
  await writeHostsDir(hostsDir, { [appDnsName('web')]: '127.0.0.1' });
  await ensureDnsResponder({ dataDir: dir, port: dnsPort, log: silentLogger });
});

afterEach(async () => {
  await Promise.all(upstreams.splice(0).map(closeServer));
});

afterAll(async () => {
  if (dir) await stopHelpersOf(dir);
  await caddy?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('proxy with a real Caddy', () => {
  it('port mode: a route answers through Caddy; the same routes again load nothing and keep connections', async () => {
    await upstream('127.0.0.1', 'a');
    const opts = { adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal' as const, dnsPort, log: silentLogger, fetch: countingFetch };
    const proxy = createCaddyProxy(opts);
    const port = await freePort();
    const before = loads;
    await proxy.apply([portRoute('web', port)]);
    expect(loads - before).toBe(1);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await send(port, { agent })).toMatchObject({ status: 200, body: 'a' });
      await proxy.apply([portRoute('web', port)]);
      // A new adapter (a restarted daemon) with the same routes: Caddy is asked, nothing is loaded.
      await createCaddyProxy(opts).apply([portRoute('web', port)]);
      expect(loads - before).toBe(1);
      const again = await send(port, { agent });
      expect(again).toMatchObject({ status: 200, body: 'a', reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('removing a route closes its listener', async () => {
    await upstream('127.0.0.1', 'a');
    const proxy = await proxyFor();
    const port = await freePort();
    await proxy.apply([portRoute('web', port)]);
    expect((await send(port)).status).toBe(200);
    await proxy.apply([]);
    await waitFor(
      () =>
        new Promise<boolean>((r) => {
          const s = connect(port, '127.0.0.1');
          s.on('connect', () => (s.destroy(), r(false)));
          s.on('error', (e: NodeJS.ErrnoException) => r(e.code === 'ECONNREFUSED'));
        }),
      { timeoutMs: 5000, what: 'listener to close' },
    );
  });

  it('flipping the DNS answer moves traffic within ~2 s with no failed request, then the old upstream drains', async () => {
    const a = await upstream('127.0.0.1', 'a');
    await upstream('127.0.0.2', 'b');
    const proxy = await proxyFor();
    const port = await freePort();
    await writeHostsDir(hostsDir, { [appDnsName('web')]: '127.0.0.1' });
    await waitFor(async () => (await resolveA(dnsPort, appDnsName('web'))) === '127.0.0.1', { what: 'record a' });
    await proxy.apply([portRoute('web', port)]);
    await waitFor(async () => (await send(port)).body === 'a', { timeoutMs: 15_000, what: 'traffic on a' });

    const failures: string[] = [];
    const seen: { at: number; body: string }[] = [];
    let stop = false;
    const deadline = Date.now() + 20_000;
    const client = async (i: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let n = 0; n < 5000 && !stop && Date.now() < deadline; n++) {
          try {
            const r = await send(port, { agent, method: (n + i) % 2 ? 'POST' : 'GET' });
            if (r.status !== 200) failures.push(`HTTP ${r.status} ${r.body.slice(0, 100)}`);
            else seen.push({ at: Date.now(), body: r.body });
          } catch (err) {
            failures.push(String(err));
          }
        }
      } finally {
        agent.destroy();
      }
    };
    const load = Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(client));
    try {
      await waitFor(() => seen.length > 50, { timeoutMs: 15_000, what: 'load running' });
      const cut = Date.now();
      await writeHostsDir(hostsDir, { [appDnsName('web')]: '127.0.0.2' });
      // Moved: the last 50 responses all come from b.
      await waitFor(() => seen.length > 50 && seen.slice(-50).every((s) => s.body === 'b' && s.at > cut), { timeoutMs: 5000, what: 'traffic on b' });
      const moved = Date.now() - cut;
      expect(moved).toBeLessThan(3000);
      // Drain: Caddy has no request in flight to a for 3 polls in a row, then a stops.
      let zeros = 0;
      await waitFor(
        async () => {
          const n = (await proxy.upstreamRequests()).get(`127.0.0.1:${upPort}`) ?? 0;
          zeros = n === 0 ? zeros + 1 : 0;
          return zeros >= 3 && Date.now() - cut >= 1250;
        },
        { timeoutMs: 10_000, intervalMs: 25, what: 'a to drain' },
      );
      await closeServer(a);
      upstreams.splice(upstreams.indexOf(a), 1);
      const after = seen.length;
      // A failure ends the wait at once; the expectation below names it.
      await waitFor(() => failures.length > 0 || seen.length > after + 200, { timeoutMs: 10_000, what: 'traffic after a stopped' });
    } finally {
      stop = true;
      await load;
    }
    expect(failures).toEqual([]);
    expect(seen.length).toBeGreaterThan(300);
  });

  it('domain mode with the internal issuer answers over HTTPS by SNI and redirects HTTP', async () => {
    await upstream('127.0.0.1', 'a');
    await writeHostsDir(hostsDir, { [appDnsName('web')]: '127.0.0.1' });
    const httpsPort = await freePort();
    const httpPort = await freePort();
    const proxy = await proxyFor({ httpPort, httpsPort, tlsIssuer: 'internal' });
    await proxy.apply([{ app: 'web', mode: 'domain', domain: 'web.svc.test', upstream: { kind: 'dns', name: appDnsName('web'), port: upPort } }]);
    const get = () =>
      new Promise<{ status: number; body: string }>((res, rej) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port: httpsPort, servername: 'web.svc.test', headers: { host: 'web.svc.test' }, rejectUnauthorized: false, path: '/', timeout: 5000 },
          (r) => {
            let body = '';
            r.on('data', (c) => (body += c));
            r.on('end', () => res({ status: r.statusCode ?? 0, body }));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', rej);
        req.end();
      });
    const r = await waitFor(async () => {
      const x = await get();
      return x.status === 200 ? x : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200, what: 'HTTPS answer' });
    expect(r.body).toBe('a');
    const redirect = await send(httpPort, { host: 'web.svc.test' });
    expect(redirect.status).toBe(308);
    await proxy.apply([]);
  });

  it('a detached responder keeps answering after the process that started it is gone', async () => {
    const port = await freePort();
    const other = await mkdtemp(join(tmpdir(), 'svc-test-detached-'));
    try {
      await writeHostsDir(dnsmasqPaths(other).hostsDir, { [appDnsName('web')]: '10.9.8.7' });
      const script = join(other, 'spawner.mts');
      await writeFile(
        script,
        `import { ensureDnsResponder } from ${JSON.stringify(resolve('src/dns/supervise.ts'))};\n` +
          `import { silentLogger } from ${JSON.stringify(resolve('src/log.ts'))};\n` +
          `const r = await ensureDnsResponder({ dataDir: ${JSON.stringify(other)}, port: ${port}, log: silentLogger });\n` +
          `process.stdout.write(JSON.stringify(r));\n`,
      );
      const spawner = () => promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: resolve('.'), timeout: 30_000 });
      const first = JSON.parse((await spawner()).stdout) as { started: boolean };
      expect(first.started).toBe(true);
      expect((await probeDnsResponder(port)).answered).toBe(true);
      expect(await resolveA(port, appDnsName('web'))).toBe('10.9.8.7');
      // A second ensure finds it by its pid file and starts nothing.
      expect(JSON.parse((await spawner()).stdout)).toMatchObject({ started: false });
    } finally {
      await stopHelpersOf(other);
      await rm(other, { recursive: true, force: true });
    }
    expect((await probeDnsResponder(port, 100)).answered).toBe(false);
  });
});
