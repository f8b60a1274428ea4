// Replicas benchmark (issue 19, one host): an app with 3 replicas behind svc's proxy under 16 keep-alive
// clients (50 % GET /, 50 % POST /cgi-bin/echo, port-mode route on 127.0.0.1), through the whole daemon
// (real engine, host Caddy, DNS responder).
//  a. N blue/green deploys (alternating v1/v2): failed requests (goal 0), seconds per deploy.
//  b. One replica of the live version `docker kill`ed every 5 s, K kills: failed requests (goal 0), each
//     failure placed after the kill it followed, and the killed replica's restart (engine StartedAt).
// Prints figures; not a test.
//
//   npm run bench:replicas -- [--deploys 50] [--kills 12] [--clients 16] [--replicas 3]
//
// Traffic goes only to loopback; every loop is bounded in count and time; everything it created is
// removed at the end, even on error.
import { silentLogger } from '../src/log.js';
import { LABELS } from '../src/runtime/runtime.js';
import { askDns } from '../src/dns/query.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, sleep, startLoad, runMain, deployAndWait, waitServed, type LoadStats } from './common.js';

const DEPLOYS = numFlag('deploys', 50, 0, 500);
const KILLS = numFlag('kills', 12, 0, 100);
const CLIENTS = numFlag('clients', 16, 1, 64);
const REPLICAS = numFlag('replicas', 3, 2, 10);
const KILL_EVERY_MS = 5_000;
const DEPLOY_TIMEOUT_MS = 60_000;
const runtime = createDockerRuntime({ log: silentLogger });

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

function table(title: string, st: LoadStats, elapsedMs: number, extra: [string, string, string][]) {
  console.log(`\n${title} (${CLIENTS} keep-alive clients, 50 % GET /, 50 % POST /cgi-bin/echo)`);
  console.log('| figure | value | goal |');
  console.log('|---|---|---|');
  console.log(`| requests | ${st.total} (${Math.round(st.total / (elapsedMs / 1000))}/s over ${(elapsedMs / 1000).toFixed(1)} s) | |`);
  console.log(`| non-2xx responses | ${sum(st.non2xx)} (${formatCounts(st.non2xx)}) | 0 |`);
  console.log(`| connection errors | ${sum(st.connErrors)} (${formatCounts(st.connErrors)}) | 0 |`);
  console.log(`| latency p50 / p99 / max | ${pct(st.latencies, 50).toFixed(1)} ms / ${pct(st.latencies, 99).toFixed(1)} ms / ${ms(st.latencies.reduce((a, b) => Math.max(a, b), 0))} | |`);
  for (const row of extra) console.log(`| ${row.join(' | ')} |`);
}

async function main() {
  await ensureTestImages(runtime);
  log(`starting daemon (${await loadAvg()})`);
  const t = await startTestDaemon('bench-replicas');
  try {
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'reps', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: REPLICAS });
    if (app.status !== 201) throw new Error(`create app: ${app.status} ${JSON.stringify(app.body)}`);
    const appId = app.body.id as number;
    const deploy = (image: string) => deployAndWait(t, appId, image, DEPLOY_TIMEOUT_MS);
    const served = (needle: string) => waitServed(port, needle);
    await deploy(WEB_V1);
    await served('v1');
    await allReplicasUp(t, appId, 15_000);
    let image = WEB_V1;

    // Part a: deploys under load.
    if (DEPLOYS > 0) {
      log(`${CLIENTS} clients on 127.0.0.1:${port}, ${DEPLOYS} deploys of ${REPLICAS} replicas`);
      const load = startLoad(port, { clients: CLIENTS, maxMs: DEPLOYS * DEPLOY_TIMEOUT_MS + 60_000 });
      const t0 = performance.now();
      let perDeploy = NaN;
      try {
        await sleep(2_000);
        const s0 = performance.now();
        for (let i = 1; i <= DEPLOYS; i++) {
          image = i % 2 === 1 ? WEB_V2 : WEB_V1;
          await deploy(image);
          if (i % 10 === 0 || i === DEPLOYS) log(`${i}/${DEPLOYS} deploys; ${load.stats.total} requests, non-2xx ${sum(load.stats.non2xx)}, conn errors ${sum(load.stats.connErrors)}`);
        }
        perDeploy = (performance.now() - s0) / DEPLOYS;
        await sleep(2_000);
      } finally {
        await load.stop();
      }
      await served(image === WEB_V2 ? 'v2' : 'v1');
      table(`Replicas: ${DEPLOYS} deploys of ${REPLICAS} replicas (${await loadAvg()})`, load.stats, performance.now() - t0, [['seconds per deploy', `${(perDeploy / 1000).toFixed(2)} s`, '']]);
    }

    // Part b: one replica killed every 5 s.
    if (KILLS > 0) {
      await allReplicasUp(t, appId, 30_000);
      log(`${KILLS} kills, one every ${KILL_EVERY_MS / 1000} s`);
      const load = startLoad(port, { clients: CLIENTS, maxMs: KILLS * KILL_EVERY_MS + 60_000 });
      const t0 = performance.now();
      const kills: { at: number; name: string; slot: string }[] = [];
      const restartMs: number[] = [];
      const leftMs: number[] = [];
      const dnsPort = Number(/udp\/127\.0\.0\.1:(\d+)/.exec(JSON.stringify(await (await fetch(`${t.caddy.adminUrl}/config/`)).json()))?.[1]);
      try {
        await sleep(2_000);
        for (let i = 1; i <= KILLS; i++) {
          const running = (await replicas(t, appId)).filter((c) => c.running);
          const victim = running[(i * 7) % running.length];
          if (!victim) throw new Error('no running replica to kill');
          const address = (await runtime.inspect(victim.name, t.network))?.address;
          const at = Date.now();
          await runtime.docker.getContainer(victim.name).kill();
          kills.push({ at, name: victim.name, slot: victim.labels['svc.slot'] ?? '0' });
          // When svc's DNS answer stopped naming it (Caddy asks again within its refresh after that).
          const leftAt = address ? await leftAnswer(dnsPort, address, 3_000) : undefined;
          if (leftAt !== undefined) leftMs.push(leftAt - at);
          await sleep(Math.max(0, at + KILL_EVERY_MS - Date.now()));
          const info = await runtime.inspect(victim.name);
          const started = info?.startedAt ? Date.parse(info.startedAt) : NaN;
          if (info?.running && started > at) restartMs.push(started - at);
          log(`kill #${i} of ${victim.name}: restarted ${info?.running ? ms(started - at) : 'not yet'} after; failures so far ${load.stats.failures.length}`);
        }
        await sleep(2_000);
      } finally {
        await load.stop();
      }
      // Each failure after the kill it followed.
      const after = load.stats.failures.map((f) => {
        const k = [...kills].reverse().find((x) => x.at <= f.at);
        return k ? `${f.what} +${f.at - k.at} ms after kill of slot ${k.slot}` : `${f.what} before any kill`;
      });
      if (process.argv.includes('--each')) for (const line of after) log(line);
      const delays = load.stats.failures.map((f) => {
        const k = [...kills].reverse().find((x) => x.at <= f.at);
        return k ? f.at - k.at : -1;
      });
      const bins = [0, 100, 250, 500, 1000, 2000, Infinity];
      const hist = bins.slice(1).map((hi, i) => `${bins[i]}-${hi === Infinity ? '' : hi} ms: ${delays.filter((d) => d >= bins[i] && d < hi).length}`);
      log(`Caddy's errors meanwhile: ${caddyErrors(t.caddy.output())}`);
      if (process.argv.includes('--caddy-log')) process.stderr.write(t.caddy.output());
      table(`Replicas: ${kills.length} kills of one of ${REPLICAS} replicas, one every ${KILL_EVERY_MS / 1000} s (${await loadAvg()})`, load.stats, performance.now() - t0, [
        ['kill -> address out of the DNS answer, p50 / max', `${ms(pct(leftMs, 50))} / ${ms(Math.max(...leftMs))} (${leftMs.length} of ${kills.length})`, ''],
        ['failures by time after the kill', hist.join(', '), ''],
        ['killed replica restarted (engine StartedAt), p50 / max', `${ms(pct(restartMs, 50))} / ${ms(Math.max(...restartMs))} (${restartMs.length} of ${kills.length})`, ''],
      ]);
    }
  } finally {
    log('cleaning up');
    await t.close();
  }
}

/** Caddy's logged proxy errors, counted by message (its stderr is kept by the test support, last 20 kB). */
function caddyErrors(output: string): string {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (!line.includes('"error"')) continue;
    try {
      const e = JSON.parse(line) as { error?: string; msg?: string };
      if (e.msg === 'reading from backend') continue; // logged again as 'aborting with incomplete response'
      const what = e.msg === 'aborting with incomplete response' ? `${e.msg}: ${e.error}` : e.error ?? e.msg ?? '';
      const k = what.replace(/\d+\.\d+\.\d+\.\d+:\d+(->)?/g, '');
      counts.set(k, (counts.get(k) ?? 0) + 1);
    } catch {
      // not a JSON log line
    }
  }
  return formatCounts(counts);
}

/** Date.now() when the app's answer no longer holds `address` (polled every 5 ms), or undefined. */
async function leftAnswer(dnsPort: number, address: string, maxMs: number): Promise<number | undefined> {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    const a = await askDns(dnsPort, 'reps.svc.internal.', 'A');
    if (a.answered && !a.records.includes(address)) return Date.now();
    await sleep(5);
  }
  return undefined;
}

/** The app's containers of its live deploy. */
async function replicas(t: TestDaemon, appId: number) {
  const liveDeploy = (await t.api('GET', `/api/apps/${appId}`)).body.current_deploy_id as number;
  const list = await runtime.list({ [LABELS.instance]: t.instance, [LABELS.appId]: String(appId) });
  return list.filter((c) => c.labels[LABELS.deploy] === String(liveDeploy));
}

async function allReplicasUp(t: TestDaemon, appId: number, maxMs: number) {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    if ((await replicas(t, appId)).filter((c) => c.running).length >= REPLICAS) return;
    await sleep(100);
  }
  throw new Error(`fewer than ${REPLICAS} replicas running after ${maxMs} ms`);
}

runMain(main);
