// Cluster benchmark (issue 19): svc with SVC_RUNTIME=swarm on a three-node Swarm of this machine
// (test/support/swarm-cluster.ts), every request through svc's proxy (the host's Caddy and the edge relay).
//   1. A 4-replica app: deploy trigger -> deploy succeeded and the proxy answers the new version, beside the
//      same on one host (SVC_RUNTIME=docker), runs alternated between the two.
//   2. 20 deploys under 16 keep-alive clients (GET / and POST /cgi-bin/echo): failed requests (goal 0).
//   3. A worker's engine killed under 4 GET clients: failed GETs (goal 0) and seconds until 4 replicas run.
//
//   npm run bench:cluster -- [--runs 5] [--deploys 20] [--graceful]
//
// Needs root (network namespaces). Traffic goes only to loopback; every loop is bounded; the cluster and
// both daemons are removed at the end, even on error.
import { execFileSync } from 'node:child_process';
import { freePort } from '../test/support/caddy.js';
import { CADDY_IMAGE, ensureCaddyImage } from '../test/support/caddy-image.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { createCluster, destroyCluster, type Cluster } from '../test/support/swarm-cluster.js';
import { DNS_IMAGE } from '../test/support/dns-image.js';
import { formatCounts, httpText, loadAvg, log, numFlag, pct, runMain, sleep, startLoad, traceDeploy } from './common.js';

const RUNS = numFlag('runs', 5, 1, 50);
const DEPLOYS = numFlag('deploys', 20, 1, 200);
const REPLICAS = 4;
/** `--graceful`: the worker's engine is stopped (SIGTERM, its containers stopped) instead of SIGKILLed. */
const GRACEFUL = process.argv.includes('--graceful');
const DEPLOY_TIMEOUT_MS = 120_000;

interface Target {
  t: TestDaemon;
  port: number;
  appId: number;
  images: [string, string];
}

async function createApp(t: TestDaemon, name: string, images: [string, string]): Promise<Target> {
  const port = await freePort();
  const res = await t.api('POST', '/api/apps', { name, internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: REPLICAS, health_check_path: '/health' });
  if (res.status !== 201) throw new Error(`create app: ${res.status} ${JSON.stringify(res.body)}`);
  return { t, port, appId: res.body.id as number, images };
}

/**
 * Trigger -> the proxy answers `needle` (the switch: every new replica healthy and in the answer), and
 * trigger -> the deploy's end (the old replicas drained and removed), in ms.
 */
async function deploy(x: Target, image: string, needle: string): Promise<{ serving: number; done: number }> {
  const t0 = performance.now();
  const res = await x.t.api('POST', `/api/apps/${x.appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  let serving = NaN;
  let ended = false;
  const watch = (async () => {
    const end = Date.now() + DEPLOY_TIMEOUT_MS;
    while (!ended && Date.now() < end) {
      const r = await httpText(`http://127.0.0.1:${x.port}/`, 2000);
      if (r?.status === 200 && r.text.includes(needle)) {
        serving = performance.now() - t0;
        return;
      }
      await sleep(20);
    }
  })();
  const trace = await traceDeploy(x.t.url, x.t.token, res.body.id as number, DEPLOY_TIMEOUT_MS);
  const done = performance.now() - t0;
  if (trace.status !== 'success') throw new Error(`deploy ${res.body.id} ended ${trace.status}: ${JSON.stringify(trace.events.at(-1))}`);
  const end = Date.now() + 15_000;
  while (Number.isNaN(serving) && Date.now() < end) await sleep(20);
  ended = true;
  await watch;
  if (Number.isNaN(serving)) throw new Error(`port ${x.port} did not serve ${needle} within 15 s of the deploy's success`);
  return { serving, done };
}

const summary = (xs: number[]) => `p50 ${(pct(xs, 50) / 1000).toFixed(2)} s, min ${(Math.min(...xs) / 1000).toFixed(2)} s, max ${(Math.max(...xs) / 1000).toFixed(2)} s`;

async function main() {
  let cluster: Cluster | undefined;
  let swarm: TestDaemon | undefined;
  let one: TestDaemon | undefined;
  try {
    await Promise.all([ensureTestImages(), ensureCaddyImage()]);
    log(`creating the cluster (${await loadAvg()})`);
    cluster = await createCluster(3);
    const c = cluster;
    const v1 = c.pushImage(WEB_V1);
    const v2 = c.pushImage(WEB_V2);
    c.docker(c.manager, ['load'], execFileSync('docker', ['save', CADDY_IMAGE, DNS_IMAGE], { maxBuffer: 1 << 30 }));
    swarm = await startTestDaemon('bench-cluster', { DOCKER_HOST: c.manager.dockerHost, SVC_RUNTIME: 'swarm', SVC_PROBE_IMAGE: v1, SVC_REGISTRY: c.registry, SVC_PROXY_IMAGE: CADDY_IMAGE, SVC_RESOLVER_IMAGE: DNS_IMAGE });
    one = await startTestDaemon('bench-cluster-one');
    const sx = await createApp(swarm, 'bench-sw', [v1, v2]);
    const ox = await createApp(one, 'bench-one', [WEB_V1, WEB_V2]);

    // 1. Trigger -> all replicas serving, alternated.
    const times = { swarm: [] as number[], one: [] as number[], swarmDone: [] as number[], oneDone: [] as number[] };
    for (let i = 0; i <= RUNS; i++) {
      const k = i % 2;
      const needle = k === 0 ? 'v1' : 'v2';
      const s = await deploy(sx, sx.images[k]!, needle);
      const o = await deploy(ox, ox.images[k]!, needle);
      // The first deploy of each is a cold start (image pulls on the workers): not counted.
      if (i > 0) {
        times.swarm.push(s.serving);
        times.one.push(o.serving);
        times.swarmDone.push(s.done);
        times.oneDone.push(o.done);
      }
      log(`run ${i}: serving after swarm ${Math.round(s.serving)} ms, one host ${Math.round(o.serving)} ms; deploy ended after ${Math.round(s.done)} / ${Math.round(o.done)} ms${i === 0 ? ' (first deploy, not counted)' : ''}`);
    }
    await one.close();
    one = undefined;
    const spread = async () => {
      const nodes = (await swarm!.api<{ hostname: string; role: string; replicas: { app?: string }[] }[]>('GET', '/api/nodes')).body;
      return nodes.map((n) => ({ ...n, count: n.replicas.filter((r) => r.app === 'bench-sw').length }));
    };
    const placed = (await spread()).map((n) => `${n.hostname}: ${n.count}`).join(', ');

    // 2. Deploys under load.
    const load = startLoad(sx.port, { clients: 16, maxMs: DEPLOYS * DEPLOY_TIMEOUT_MS + 60_000 });
    const deployTimes: number[] = [];
    let last = RUNS % 2;
    try {
      await sleep(1_000);
      for (let i = 1; i <= DEPLOYS; i++) {
        last = 1 - last;
        deployTimes.push((await deploy(sx, sx.images[last]!, last === 0 ? 'v1' : 'v2')).done);
        if (i % 5 === 0) log(`${i}/${DEPLOYS} deploys under load; ${load.stats.total} requests, ${load.stats.total - load.stats.ok} failed`);
      }
      await sleep(1_000);
    } finally {
      await load.stop();
    }
    const ls = load.stats;

    // 3. A worker lost under GETs.
    // The worker with the most replicas: every dead address a GET may pick before a live one.
    const victim = (await spread()).filter((n) => n.role === 'worker' && n.count > 0).sort((a, b) => b.count - a.count)[0]!;
    const placedBefore = (await spread()).map((n) => `${n.hostname} ${n.count}`).join(', ');
    let slowestMs = 0;
    let ok = 0;
    const failed = new Map<string, number>();
    let stop = false;
    const deadline = Date.now() + 120_000;
    const loop = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop && Date.now() < deadline) {
          const sent = performance.now();
          const r = await httpText(`http://127.0.0.1:${sx.port}/`, 15_000);
          slowestMs = Math.max(slowestMs, performance.now() - sent);
          if (r?.status === 200) ok++;
          else failed.set(String(r?.status ?? 'no answer'), (failed.get(String(r?.status ?? 'no answer')) ?? 0) + 1);
        }
      }),
    );
    const t0 = performance.now();
    let backMs = NaN;
    try {
      const node = c.nodes.find((n) => n.hostname === victim.hostname)!;
      await (GRACEFUL ? c.stopNodeEngine(node) : c.killNode(node));
      const end = Date.now() + 90_000;
      while (Date.now() < end) {
        const now = await spread();
        if (now.reduce((s, n) => s + n.count, 0) === REPLICAS && now.find((n) => n.hostname === victim.hostname)!.count === 0) {
          backMs = performance.now() - t0;
          break;
        }
        await sleep(100);
      }
      const more = ok + 100;
      while (ok < more && Date.now() < deadline) await sleep(20);
    } finally {
      stop = true;
      await loop;
    }

    console.log(`\nCluster benchmark (3 nodes in network namespaces of one machine, ${REPLICAS} replicas, every request through svc's proxy; ${await loadAvg()})`);
    console.log(`  placement: ${placed}`);
    console.log(`  deploy trigger -> all ${REPLICAS} new replicas serving through the proxy (${RUNS} runs each, alternated):`);
    console.log(`    Swarm (3 nodes): ${summary(times.swarm)}; the deploy's end (old replicas drained and removed) ${summary(times.swarmDone)}`);
    console.log(`    one host:        ${summary(times.one)}; the deploy's end ${summary(times.oneDone)}`);
    console.log(`  ${DEPLOYS} deploys under 16 keep-alive clients (GET / and POST /cgi-bin/echo): ${ls.total} requests, ${ls.total - ls.ok} failed`);
    console.log(`    non-2xx: ${formatCounts(ls.non2xx)}; connection errors: ${formatCounts(ls.connErrors)}; deploy to its end ${summary(deployTimes)}`);
    console.log(`  worker ${victim.hostname} lost (engine ${GRACEFUL ? 'stopped' : 'SIGKILLed'}) under 4 GET clients: ${ok} GETs ok, ${[...failed.values()].reduce((a, b) => a + b, 0)} failed (${formatCounts(failed)})`);
    console.log(`    replicas before (node count): ${placedBefore}; slowest GET ${(slowestMs / 1000).toFixed(2)} s`);
    console.log(`    back at ${REPLICAS} replicas after ${(backMs / 1000).toFixed(2)} s`);
  } finally {
    await one?.close().catch(() => {});
    await swarm?.close().catch(() => {});
    destroyCluster(cluster);
  }
}

runMain(main);
