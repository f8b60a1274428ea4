// Two replicas of one app behind one DNS name, for real: two web containers on a test network, both
// addresses in the app's hosts file, svc's dnsmasq responder and a host Caddy with svc's route. Caddy
// balances over both; one replica `docker kill`ed under a bounded load of GETs and POSTs costs no
// request that it had not already accepted (docs/decisions/0016-replicas-behind-one-name.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCaddyProxy } from '../../src/proxy/caddy.js';
import { appDnsName, type Route } from '../../src/proxy/proxy.js';
import { DNS_REFRESH_MS } from '../../src/proxy/config.js';
import { ensureDnsResponder } from '../../src/dns/supervise.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { silentLogger } from '../../src/log.js';
import { freePort, startCaddy, type TestCaddy } from '../support/caddy.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
const INSTANCE = `test-replicas-${process.pid}`;
const NET = `svc-test-replicas-${process.pid}`;
const labels = { [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE, [LABELS.app]: 'web' };
const NAME = appDnsName('web');
let caddy: TestCaddy | undefined;
let dir: string | undefined;

interface Outcome {
  method: string;
  status: number;
  body: string;
  /** When the request was sent and when its answer (or error) came, ms since the load started. */
  at: number;
  done?: number;
  error?: string;
  /** The answer's status line came, then the connection broke: the replica died while writing its answer. */
  cut?: boolean;
}

/** One request through Caddy; connection errors are outcomes (status 0), not exceptions. */
function send(port: number, method: 'GET' | 'POST', agent: Agent, t0: number): Promise<Outcome> {
  const at = Date.now() - t0;
  return new Promise<Outcome>((settle) => {
    const resolve = (o: Outcome) => settle({ ...o, done: Date.now() - t0 });
    const req = request({ host: '127.0.0.1', port, method, path: method === 'GET' ? '/' : '/cgi-bin/echo', agent, timeout: 15_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ method, status: res.statusCode ?? 0, body, at }));
      res.on('error', (err) => resolve({ method, status: res.statusCode ?? 0, body, at, error: err.message, cut: true }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', (err) => resolve({ method, status: 0, body: '', at, error: err.message }));
    req.end(method === 'POST' ? 'x=1' : undefined);
  });
}

/** Which replica answered (the images name their version in every answer). */
const replica = (o: Outcome) => (/v1/.test(o.body) ? 'v1' : /v2/.test(o.body) ? 'v2' : '?');

beforeAll(async () => {
  await ensureTestImages(runtime);
  await runtime.ensureNetwork(NET);
});

afterAll(async () => {
  await caddy?.stop();
  if (dir) await stopHelpersOf(dir);
  for (const c of await runtime.list({ [LABELS.instance]: INSTANCE }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
  const nets = await runtime.docker.listNetworks({ filters: { name: [NET] } }).catch(() => []);
  for (const n of nets.filter((x) => x.Name === NET)) await runtime.docker.getNetwork(n.Id).remove().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('replicas behind one name', () => {
  it('Caddy balances over every address of the name; a replica killed under load costs no request', async () => {
    const [a, b] = await Promise.all(
      [WEB_V1, WEB_V2].map((image, i) => runtime.run({ name: `svc-test-replica-${process.pid}-${i}`, image, labels, network: NET })),
    );
    expect(a.address && b.address).toBeTruthy();
    dir = await mkdtemp(join(tmpdir(), 'svc-test-replicas-'));
    const { hostsDir } = dnsmasqPaths(dir);
    const dnsPort = await freePort();
    await writeHostsDir(hostsDir, { [NAME]: [a.address!, b.address!] });
    await ensureDnsResponder({ dataDir: dir, port: dnsPort, log: silentLogger });
    caddy = await startCaddy();
    const proxy = createCaddyProxy({ adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort, log: silentLogger });
    const port = await freePort();
    const route: Route = { app: 'web', mode: 'port', port, upstream: { kind: 'dns', name: NAME, port: WEB_PORT } };
    await proxy.apply([route]);

    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    try {
      // Balanced: both replicas answer through the one route.
      const seen = new Set<string>();
      await waitFor(async () => {
        const o = await send(port, 'GET', agent, Date.now());
        if (o.status === 200) seen.add(replica(o));
        return seen.size === 2;
      }, { what: 'both replicas to answer through Caddy', intervalMs: 10 });

      // Bounded load: 8 clients alternating GET and POST until enough answers came after the kill.
      const t0 = Date.now();
      const outcomes: Outcome[] = [];
      let killedAt = 0;
      let killDone = 0;
      let answerAt = 0;
      let stop = false;
      const clients = Array.from({ length: 8 }, async (_, i) => {
        for (let n = 0; !stop && n < 20_000; n++) outcomes.push(await send(port, (n + i) % 2 ? 'POST' : 'GET', agent, t0));
      });
      try {
        await waitFor(() => outcomes.filter((o) => replica(o) === 'v2').length >= 100, { what: 'load on both replicas', timeoutMs: 20_000 });
        killedAt = Date.now() - t0;
        await runtime.docker.getContainer(b.id).kill();
        killDone = Date.now() - t0;
        // What svc does on the `die` event: the name answers the live replicas only.
        await writeHostsDir(hostsDir, { [NAME]: [a.address!] });
        answerAt = Date.now() - t0;
        await waitFor(() => outcomes.filter((o) => o.at > answerAt + 2_000).length >= 400, { what: 'load after the kill', timeoutMs: 30_000 });
      } finally {
        stop = true;
        await Promise.all(clients);
      }
      // Caddy sees the new answer within its refresh (DNS_REFRESH_MS) after dnsmasq re-read the file (inotify);
      // the margin is for a loaded machine.
      const windowEnd = answerAt + DNS_REFRESH_MS + 750;
      const before = outcomes.filter((o) => o.at < killedAt);
      const failed = outcomes.filter((o) => o.status !== 200 || o.cut);
      const cut = failed.filter((o) => o.cut);
      const refused = failed.filter((o) => !o.cut);
      const later = outcomes.filter((o) => o.at > windowEnd);
      const share = before.filter((o) => replica(o) === 'v1').length / before.length;
      console.log(
        `replicas: ${outcomes.length} requests (${outcomes.filter((o) => o.method === 'POST').length} POST); v1 share before the kill ${(share * 100).toFixed(0)} %; ` +
          `kill at ${killedAt} ms, answer rewritten at ${answerAt} ms; failed ${failed.length} (${failed.map((o) => `${o.method} ${o.status}${o.error ? ` ${o.error}` : ''} ${o.at}-${o.done} ms`).join(', ')})`,
      );
      expect(share).toBeGreaterThan(0.25); // balanced, not `first`
      expect(share).toBeLessThan(0.75);
      // GETs: none refused; the ones Caddy sent to the dead replica (refused, reset, no answer) were
      // retried on the live one.
      expect(refused.filter((o) => o.method === 'GET')).toEqual([]);
      // An answer the replica was writing when it was killed is cut: Caddy had its status line (busybox
      // httpd writes it apart from the body), and Caddy, 2.6.2 as every later version, commits to an
      // upstream once it has read the response headers, so no retry setting applies
      // (docs/decisions/0016-replicas-behind-one-name.md). Such a request was sent before the kill
      // returned, still open at the kill, and Caddy logged the cut body for it.
      for (const o of cut) expect(o.at).toBeLessThanOrEqual(killDone);
      for (const o of cut) expect(o.done).toBeGreaterThanOrEqual(killedAt);
      expect(caddy!.output().split('aborting with incomplete response').length - 1).toBeGreaterThanOrEqual(cut.length);
      // POSTs: one in flight on the replica at the kill is a 502 (never retried: it might run twice). On
      // Caddy 2.6.2, which cannot resend a body, so is one it had picked the dead replica for before the
      // answer changed, or a 503 when passive health had marked the dead one and 2.6.2's round_robin missed
      // the live one (docs/decisions/0044-caddy-2-11.md); never a dropped connection, never after the window.
      for (const o of refused) expect(o).toMatchObject({ method: 'POST', status: expect.toSatisfy((s: number) => s === 502 || s === 503) });
      for (const o of failed) expect(o.done).toBeGreaterThanOrEqual(killedAt);
      for (const o of failed) expect(o.at).toBeLessThanOrEqual(windowEnd);
      expect(later.filter((o) => o.status !== 200)).toEqual([]);
      // Nothing reaches the killed replica after the window (a busybox CGI answer under load may come back
      // 200 without its version line, so only v2 is ruled out, not every other body).
      expect(later.filter((o) => replica(o) === 'v2')).toEqual([]);
      expect(later.filter((o) => replica(o) === 'v1').length).toBeGreaterThan(later.length / 2);
    } finally {
      agent.destroy();
    }
  });
});
