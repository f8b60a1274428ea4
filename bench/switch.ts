// Switch benchmark (design D of notes/zero-downtime-switch.md, kept as the experiment that won):
// N blue/green switches of one app between busybox httpd containers behind a real Caddy whose route
// resolves through svc's DNS responder, while 16 keep-alive clients send 50 % GET and 50 % POST
// through Caddy over loopback. Each switch: start the new container, probe it directly until 2xx,
// flip the DNS answer, wait one refresh, drain (old address at 0 in-flight for 3 polls, >= 250 ms after
// the cut, capped at 10 s), stop and remove the old one. Prints non-2xx and connection errors separately.
//
//   npm run bench:switch -- [--switches 30] [--clients 16] [--proxy host|container]
//
// Traffic goes only to loopback and to containers it started; every loop is bounded in count and time;
// containers (labels svc.managed=true, svc.instance=test-proxy-bench) are removed at the end, even on error.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { LABELS, type Runtime } from '../src/runtime/runtime.js';
import { createCaddyProxy, type CaddyProxy } from '../src/proxy/caddy.js';
import { DNS_REFRESH_MS } from '../src/proxy/config.js';
import { ensureProxyContainer } from '../src/proxy/container.js';
import { appDnsName } from '../src/proxy/proxy.js';
import { ensureDnsResponder } from '../src/dns/supervise.js';
import { dnsmasqPaths } from '../src/dns/dnsmasq.js';
import { writeHostsDir } from '../src/dns/hosts.js';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { silentLogger } from '../src/log.js';
import { freePort, startCaddy, type TestCaddy } from '../test/support/caddy.js';
import { ensureCaddyImage } from '../test/support/caddy-image.js';

const INSTANCE = 'test-proxy-bench';
const NETWORK = 'svc-bench-switch';
const IMAGE = 'svc-test/bench-web:2';
const APP_PORT = 3000;
const labels = { [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE, [LABELS.role]: 'app' };

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const SWITCHES = Math.min(Math.max(Number(flag('switches', '30')), 1), 500);
const CLIENTS = Math.min(Math.max(Number(flag('clients', '16')), 1), 64);
const PROXY_KIND = flag('proxy', 'host') === 'container' ? 'container' : 'host';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${msg}\n`);

/** busybox httpd image: GET / is a static page, POST /cgi-bin/post a CGI (httpd answers POST only to CGIs, 501 otherwise). */
async function ensureImage(runtime: Runtime) {
  if (await runtime.hasImage(IMAGE)) return;
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-image-'));
  try {
    const root = join(dir, 'rootfs');
    mkdirSync(join(root, 'bin'), { recursive: true });
    copyFileSync('/bin/busybox', join(root, 'bin/busybox'));
    chmodSync(join(root, 'bin/busybox'), 0o755);
    for (const a of ['sh', 'httpd', 'cat']) symlinkSync('busybox', join(root, 'bin', a));
    mkdirSync(join(root, 'www/cgi-bin'), { recursive: true });
    writeFileSync(join(root, 'www/index.html'), 'ok\n');
    writeFileSync(join(root, 'www/cgi-bin/post'), '#!/bin/sh\ncat >/dev/null\nprintf "Content-Type: text/plain\\r\\n\\r\\nposted\\n"\n', { mode: 0o755 });
    // httpd as PID 1 would ignore SIGTERM (each stop would wait the full grace): a shell forwards it, and
    // httpd then dies with its in-flight requests, the worst case an app can be.
    writeFileSync(join(root, 'start'), `#!/bin/sh\nhttpd -f -p ${APP_PORT} -h /www &\npid=$!\ntrap 'kill $pid; exit 0' TERM\nwait $pid\n`, { mode: 0o755 });
    writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/bin\nCMD ["/bin/sh", "/start"]\n');
    await runtime.build(dir, IMAGE);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts an app container and probes it directly every 25 ms until it answers 2xx/3xx (max 30 s). */
async function startApp(runtime: Runtime, name: string): Promise<string> {
  const info = await runtime.run({ name, image: IMAGE, labels, network: NETWORK });
  const address = info.address ?? (await runtime.inspect(name, NETWORK))?.address;
  if (!address) throw new Error(`${name} has no address on ${NETWORK}`);
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const status = await new Promise<number>((resolve) => {
      const req = request({ host: address, port: APP_PORT, path: '/', timeout: 1000, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(0));
      req.end();
    });
    if (status >= 200 && status < 400) return address;
    await sleep(25);
  }
  throw new Error(`${name} did not answer within 30 s`);
}

interface Stats {
  total: number;
  ok: number;
  non2xx: Map<string, number>;
  connErrors: Map<string, number>;
  maxLatencyMs: number;
}

/** One keep-alive client: alternates GET / and POST /cgi-bin/post until stopped, a deadline, or a count. */
async function client(port: number, i: number, stats: Stats, until: () => boolean) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  try {
    for (let n = 0; n < 2_000_000 && !until(); n++) {
      const post = (n + i) % 2 === 1;
      const started = Date.now();
      await new Promise<void>((resolve) => {
        const req = request(
          { host: '127.0.0.1', port, agent, method: post ? 'POST' : 'GET', path: post ? '/cgi-bin/post' : '/', timeout: 15_000, headers: post ? { 'content-type': 'application/x-www-form-urlencoded' } : {} },
          (res) => {
            res.resume();
            res.on('end', () => {
              stats.total++;
              const s = res.statusCode ?? 0;
              if (s >= 200 && s < 300) stats.ok++;
              else bump(stats.non2xx, `${post ? 'POST' : 'GET'} ${s}`);
              stats.maxLatencyMs = Math.max(stats.maxLatencyMs, Date.now() - started);
              resolve();
            });
            res.on('error', (err) => {
              stats.total++;
              bump(stats.connErrors, `${post ? 'POST' : 'GET'} ${(err as NodeJS.ErrnoException).code ?? err.message}`);
              resolve();
            });
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', (err: NodeJS.ErrnoException) => {
          stats.total++;
          bump(stats.connErrors, `${post ? 'POST' : 'GET'} ${err.code ?? err.message}`);
          resolve();
        });
        req.end(post ? 'x=1' : undefined);
      });
    }
  } finally {
    agent.destroy();
  }
}

/** Drain (rule 2): old address at 0 in flight (or absent) for 3 polls in a row, >= 250 ms after the cut, max 10 s. */
async function drain(proxy: CaddyProxy, oldAddr: string, cutAt: number): Promise<{ ms: number; capped: boolean }> {
  let zeros = 0;
  while (Date.now() - cutAt < 10_000) {
    const n = (await proxy.upstreamRequests().catch(() => new Map<string, number>())).get(oldAddr) ?? 0;
    zeros = n === 0 ? zeros + 1 : 0;
    if (zeros >= 3 && Date.now() - cutAt >= 250) return { ms: Date.now() - cutAt, capped: false };
    await sleep(25);
  }
  return { ms: Date.now() - cutAt, capped: true };
}

async function main() {
  const runtime = createDockerRuntime({ log: silentLogger });
  const work = await mkdtemp(join(tmpdir(), 'svc-bench-switch-'));
  const { hostsDir } = dnsmasqPaths(work);
  let caddy: TestCaddy | undefined;
  let stopLoad = true;
  let load: Promise<unknown> = Promise.resolve();
  const cleanup = async () => {
    stopLoad = true;
    await load;
    for (const c of await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
    await promisify(execFile)('docker', ['network', 'rm', NETWORK]).catch(() => {});
    await stopHelpersOf(work);
    await caddy?.stop();
    await rm(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    await ensureImage(runtime);
    await runtime.ensureNetwork(NETWORK);
    const dnsPort = await freePort();
    const listenPort = await freePort();
    await writeHostsDir(hostsDir, {});
    await ensureDnsResponder({ dataDir: work, port: dnsPort, log: silentLogger });

    let adminUrl: string;
    if (PROXY_KIND === 'host') {
      caddy = await startCaddy();
      adminUrl = caddy.adminUrl;
    } else {
      adminUrl = `http://127.0.0.1:${await freePort()}`;
    }
    const proxy = createCaddyProxy({ adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort, log: silentLogger });
    if (PROXY_KIND === 'container') {
      await ensureProxyContainer({ runtime, image: await ensureCaddyImage(), adminUrl, dataDir: work, instance: INSTANCE, name: `${INSTANCE}-caddy`, log: silentLogger, waitReady: proxy.waitReady });
    }

    let seq = 0;
    let live = `${INSTANCE}-${seq++}`;
    let liveAddr = await startApp(runtime, live);
    await writeHostsDir(hostsDir, { [appDnsName('web')]: liveAddr });
    await proxy.apply([{ app: 'web', mode: 'port', port: listenPort, upstream: { kind: 'dns', name: appDnsName('web'), port: APP_PORT } }]);
    const warm = Date.now() + 10_000;
    while (Date.now() < warm) {
      const r = await fetch(`http://127.0.0.1:${listenPort}/`).catch(() => undefined);
      if (r?.ok) break;
      await sleep(50);
    }

    const stats: Stats = { total: 0, ok: 0, non2xx: new Map(), connErrors: new Map(), maxLatencyMs: 0 };
    const deadline = Date.now() + SWITCHES * 30_000 + 30_000;
    stopLoad = false;
    load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(listenPort, i, stats, () => stopLoad || Date.now() > deadline)));
    log(`${PROXY_KIND} caddy, ${CLIENTS} clients, ${SWITCHES} switches`);
    await sleep(1000);

    const perSwitch: number[] = [];
    const drains: number[] = [];
    let capped = 0;
    const began = Date.now();
    for (let i = 0; i < SWITCHES && Date.now() < deadline; i++) {
      const t0 = Date.now();
      const next = `${INSTANCE}-${seq++}`;
      const nextAddr = await startApp(runtime, next);
      await writeHostsDir(hostsDir, { [appDnsName('web')]: nextAddr });
      const cutAt = Date.now();
      await sleep(DNS_REFRESH_MS); // Caddy re-resolves at most one refresh later
      const d = await drain(proxy, `${liveAddr}:${APP_PORT}`, cutAt);
      drains.push(d.ms);
      if (d.capped) capped++;
      await runtime.stop(live, 10);
      await runtime.remove(live);
      perSwitch.push((Date.now() - t0) / 1000);
      live = next;
      liveAddr = nextAddr;
      log(`switch ${i + 1}/${SWITCHES}: ${perSwitch.at(-1)!.toFixed(2)} s (drain ${d.ms} ms${d.capped ? ', capped' : ''}), requests so far ${stats.total}`);
    }
    await sleep(1000);
    stopLoad = true;
    await load;
    const elapsed = (Date.now() - began) / 1000;

    const fmt = (m: Map<string, number>) => ([...m].map(([k, v]) => `${k} x${v}`).join(', ') || 'none');
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const mean = perSwitch.reduce((a, b) => a + b, 0) / perSwitch.length;
    console.log(
      [
        `proxy: ${PROXY_KIND} Caddy (design D: dynamic upstreams via svc's DNS responder)`,
        `switches: ${perSwitch.length}, clients: ${CLIENTS} (50% GET, 50% POST), duration ${elapsed.toFixed(1)} s`,
        `requests total: ${stats.total}, 2xx: ${stats.ok}`,
        `non-2xx responses: ${sum(stats.non2xx)} (${fmt(stats.non2xx)})`,
        `connection errors: ${sum(stats.connErrors)} (${fmt(stats.connErrors)})`,
        `seconds per switch: mean ${mean.toFixed(2)}, min ${Math.min(...perSwitch).toFixed(2)}, max ${Math.max(...perSwitch).toFixed(2)}`,
        `drain after the cut: mean ${Math.round(drains.reduce((a, b) => a + b, 0) / drains.length)} ms, capped ${capped}`,
        `max request latency: ${stats.maxLatencyMs} ms, throughput ${(stats.total / elapsed).toFixed(0)} req/s`,
      ].join('\n'),
    );
    process.exitCode = sum(stats.non2xx) + sum(stats.connErrors) === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

await main();
