// The Swarm edge's reload race, on demand (issue 19, docs/design.md "Two relays, swapped"): POST clients
// through a real host Caddy and svc's real edge relays (the proxy image, containers on a bridge network of
// this engine, the same code the daemon runs: createEdgeRelays + relayedEdge) to the test app, whose CGI
// answers before reading the body, while the relays get many config loads (new DNS answers of an unused app,
// the path of a switch). Rounds alternate the baseline (`relays 1`: every load reloads the relay carrying
// the traffic, as before) and the pair (`relays 2`: loaded while standby, then swapped). Prints, per round,
// requests, failures, the host Caddy's error lines by message, and how long each load (a switch's wait) took.
//
//   npm run bench:relay-reloads -- [--loads 200] [--clients 16] [--body 3] [--post-delay 10] [--rounds 2] [--only 0|1|2]
//
// No cluster: the race is between the host's Caddy, the unix socket and the relay's reload, not the
// overlay. Traffic goes only to loopback and to containers it started; every loop is bounded; the
// containers, network, Caddy and temp dir are removed at the end, even on error.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../src/log.js';
import { createCaddyProxy } from '../src/proxy/caddy.js';
import { edgePaths, type DnsRecords } from '../src/proxy/edge-config.js';
import { relayedEdge } from '../src/proxy/edge-proxy.js';
import { createEdgeRelays } from '../src/proxy/edge-relays.js';
import type { Route } from '../src/proxy/proxy.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { LABELS } from '../src/runtime/runtime.js';
import { freePort, startCaddy, type TestCaddy } from '../test/support/caddy.js';
import { CADDY_IMAGE, ensureCaddyImage } from '../test/support/caddy-image.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../test/support/images.js';
import { waitFor } from '../test/support/wait.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, runMain, sleep, startLoad, waitServed } from './common.js';

const LOADS = numFlag('loads', 200, 1, 1000);
const CLIENTS = numFlag('clients', 16, 1, 64);
const BODY = numFlag('body', 3, 3, 1 << 20);
/** A slow upload: each POST's body a random 0..this many ms after its headers (0: at once). */
const DELAY = numFlag('post-delay', 10, 0, 1000);
const ROUNDS = numFlag('rounds', 2, 1, 10);
/** 1 or 2: only that variant (0: both, alternated). */
const ONLY = numFlag('only', 0, 0, 2);

async function round(relays: 1 | 2): Promise<string> {
  const instance = `svcbench-rr${randomBytes(3).toString('hex')}`;
  const network = `${instance}-net`;
  const dataDir = await mkdtemp('/tmp/svc-rr-');
  const runtime = createDockerRuntime({ log: silentLogger, instance });
  let caddy: TestCaddy | undefined;
  try {
    await runtime.ensureNetwork(network);
    const app = await runtime.run({ name: `${instance}-app`, image: WEB_V1, network, labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance } });
    if (!app.address) throw new Error('the test app has no address on the bench network');
    const paths = edgePaths(dataDir);
    const pair = createEdgeRelays({ runtime, image: CADDY_IMAGE, instance, network, paths, user: `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`, log: silentLogger, relays });
    caddy = await startCaddy();
    const proxy = createCaddyProxy({ adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort: 5353, log: silentLogger });
    const edge = relayedEdge(pair, paths.socket)({ routes: proxy, drain: proxy, writeDns: async () => {} });
    const [port, decoyPort] = [await freePort(), await freePort()];
    const routes: Route[] = [
      { app: 'posts', mode: 'port', port, upstream: { kind: 'dns', name: 'posts.svc.internal.', port: WEB_PORT } },
      // Never requested: its answer changes at each load, as a switch changes an app's.
      { app: 'decoy', mode: 'port', port: decoyPort, upstream: { kind: 'dns', name: 'decoy.svc.internal.', port: WEB_PORT } },
    ];
    const recordsAt = (i: number): DnsRecords => ({ 'posts.svc.internal.': [app.address!], 'decoy.svc.internal.': `10.255.255.${1 + (i % 2)}` });
    await waitFor(async () => (await pair.ensureRunning()) === 'running', { timeoutMs: 30_000, what: 'the relays run' });
    await edge.writeDns(recordsAt(0));
    await waitFor(async () => {
      await pair.ensureRunning();
      await edge.routes.apply(routes);
      return edge.routes.serves(routes);
    }, { timeoutMs: 30_000, what: 'the relays and Caddy serve the routes' });
    await waitServed(port, 'v1', 15_000);
    const load = startLoad(port, { clients: CLIENTS, maxMs: LOADS * 2_000 + 30_000, postBytes: BODY, postDelayMs: DELAY });
    const waits: number[] = [];
    try {
      await sleep(500);
      for (let i = 1; i <= LOADS; i++) {
        const t0 = performance.now();
        await edge.writeDns(recordsAt(i));
        waits.push(performance.now() - t0);
        await sleep(50 + Math.random() * 50);
      }
      await sleep(500);
    } finally {
      await load.stop();
    }
    const s = load.stats;
    const errs = new Map<string, number>();
    for (const l of caddy.output().split('\n').filter((x) => /"level":"(error|warn)"/.test(x))) {
      const k = (/"error":"([^"]*)"/.exec(l)?.[1] ?? /"msg":"([^"]*)"/.exec(l)?.[1] ?? '?').replace(/unix\/\S+?:/g, 'unix:').replace(/->[^ ]+/g, '');
      errs.set(k, (errs.get(k) ?? 0) + 1);
    }
    return (
      `relays ${relays}: ${LOADS} loads, ${CLIENTS} clients, POST body ${BODY} B 0-${DELAY} ms after its headers: ${s.total} requests, ${s.total - s.ok} failed; ` +
      `non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)}; load wait p50 ${ms(pct(waits, 50))} p95 ${ms(pct(waits, 95))} max ${ms(Math.max(...waits))}; ` +
      `host Caddy errors ${formatCounts(errs)} (${await loadAvg()})`
    );
  } finally {
    await caddy?.stop().catch(() => {});
    for (const c of await runtime.list({ [LABELS.instance]: instance }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
    try {
      execFileSync('docker', ['network', 'rm', network], { stdio: 'ignore' });
    } catch {
      /* not made */
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  await Promise.all([ensureTestImages(), ensureCaddyImage()]);
  log(`start (${await loadAvg()})`);
  const variants: (1 | 2)[] = ONLY === 1 ? [1] : ONLY === 2 ? [2] : [1, 2];
  for (let r = 1; r <= ROUNDS; r++) {
    for (const v of variants) {
      const line = await round(v);
      console.log(`round ${r}: ${line}`);
    }
  }
}
runMain(main);
