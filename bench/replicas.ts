// Replicas benchmark (issue 19, one host): an app with 3 replicas behind svc's proxy under 16 keep-alive
// clients (50 % GET /, 50 % POST /cgi-bin/echo, port-mode route on 127.0.0.1), through the whole daemon
// (real engine, host Caddy, DNS responder).
//  a. N blue/green deploys (alternating v1/v2): failed requests (goal 0), seconds per deploy.
//  b. One replica of the live version killed every 4 s, K kills (issue 37): `--how kill` (`docker kill`,
//     SIGKILL), `rm` (`docker rm -f`: svc recreates it) or `oom` (the app gets a 16 MiB cap, its httpd is
//     made the OOM killer's pick and a 64 MiB allocation is run beside it: the kernel kills httpd,
//     OOMKilled). Per kill: the requests Caddy had in flight on the victim just before (Caddy's count),
//     the failed GETs and POSTs until the next kill (goal: 0 GETs, POSTs only those in flight), requests
//     that took 1 s or more (goal 0), when the address left the DNS answer and when the replica was back.
//     `--how none` kills nothing: the control, what the same load costs on this machine without a kill.
// Prints figures; not a test. Which Caddy: SVC_TEST_CADDY (test/support/caddy.ts; default Caddy 2.11).
//
//   npm run bench:replicas -- [--deploys 50] [--kills 12] [--how kill|rm|oom|none] [--clients 16] [--replicas 3]
//
// Traffic goes only to loopback; every loop is bounded in count and time; everything it created is
// removed at the end, even on error.
import { silentLogger } from '../src/log.js';
import { LABELS } from '../src/runtime/runtime.js';
import { askDns } from '../src/dns/query.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { caddyBin, freePort } from '../test/support/caddy.js';
import { caddyVersionOf } from '../test/support/caddy-unstable.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, sleep, startLoad, runMain, deployAndWait, waitServed, SLOW_MS, type LoadStats } from './common.js';
import { adminFetch } from '../test/support/admin-fetch.js';

const DEPLOYS = numFlag('deploys', 50, 0, 500);
const KILLS = numFlag('kills', 12, 0, 100);
const CLIENTS = numFlag('clients', 16, 1, 64);
const REPLICAS = numFlag('replicas', 3, 2, 10);
const KILL_EVERY_MS = numFlag('every', 4_000, 1_000, 60_000);
const HOW = (['kill', 'rm', 'oom', 'none'] as const).find((h) => process.argv.includes(`--how`) && process.argv[process.argv.indexOf('--how') + 1] === h) ?? 'kill';
const OOM_CAP_MB = 16;
const CADDY_VERSION = caddyVersionOf(caddyBin());

interface Kill {
  at: number;
  name: string;
  slot: string;
  inFlight: number;
  leftMs?: number;
  backMs?: number;
  oomKilled?: boolean;
}
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
    const resources = HOW === 'oom' ? { resources: { memory_mb: OOM_CAP_MB, cpus: null } } : {};
    const app = await t.api('POST', '/api/apps', { name: 'reps', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: REPLICAS, ...resources });
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

    // Part b: one replica killed every KILL_EVERY_MS, the way HOW says.
    if (KILLS > 0) {
      await allReplicasUp(t, appId, 30_000);
      log(`${KILLS} kills (${HOW}), one every ${KILL_EVERY_MS / 1000} s`);
      const load = startLoad(port, { clients: CLIENTS, maxMs: KILLS * KILL_EVERY_MS + 60_000 });
      const t0 = performance.now();
      const kills: Kill[] = [];
      const dnsPort = Number(/udp\/127\.0\.0\.1:(\d+)/.exec(JSON.stringify(await (await adminFetch(`${t.caddy.adminUrl}/config/`)).json()))?.[1]);
      try {
        await sleep(2_000);
        for (let i = 1; i <= KILLS; i++) {
          const running = (await replicas(t, appId)).filter((c) => c.running);
          const victim = running[(i * 7) % running.length];
          if (!victim) throw new Error('no running replica to kill');
          const address = (await runtime.inspect(victim.name, t.network))?.address;
          // Requests Caddy had in flight on it just before (its own count, per upstream address).
          const inFlight = address ? ((await upstreamCounts(t.caddy.adminUrl)).get(`${address}:${WEB_PORT}`) ?? 0) : NaN;
          const at = Date.now();
          await killOne(victim.name);
          const kill: Kill = { at, name: victim.name, slot: victim.labels['svc.slot'] ?? '0', inFlight };
          kills.push(kill);
          // When svc's DNS answer stopped naming it (Caddy asks again within its refresh after that).
          const leftAt = address ? await leftAnswer(dnsPort, address, 3_000) : undefined;
          if (leftAt !== undefined) kill.leftMs = leftAt - at;
          await sleep(Math.max(0, at + KILL_EVERY_MS - Date.now()));
          const info = await runtime.inspect(victim.name);
          const started = info?.startedAt ? Date.parse(info.startedAt) : NaN;
          if (info?.running && started > at) kill.backMs = started - at;
          kill.oomKilled = (await runtime.docker.getContainer(victim.name).inspect().catch(() => undefined))?.State?.OOMKilled;
          log(`kill #${i} of ${victim.name}: ${inFlight} in flight on it, back ${kill.backMs !== undefined ? ms(kill.backMs) : 'not yet'} after; failures so far ${load.stats.failures.length}`);
        }
        await sleep(2_000);
      } finally {
        await load.stop();
      }
      const elapsed = performance.now() - t0;
      // Each failure and each slow request placed in the window of the kill it followed.
      const windowOf = (ts: number) => {
        let w = -1;
        kills.forEach((k, i) => (k.at <= ts ? (w = i) : undefined));
        return w;
      };
      const perKill = kills.map(() => ({ get: 0, post: 0, slow: 0, maxMs: 0 }));
      let before = 0;
      for (const f of load.stats.failures) {
        const w = windowOf(f.at);
        if (w < 0) before++;
        else if (f.what.startsWith('GET')) perKill[w].get++;
        else perKill[w].post++;
      }
      for (const r of load.stats.slow) {
        const w = windowOf(r.sentAt);
        if (w >= 0) {
          perKill[w].slow++;
          perKill[w].maxMs = Math.max(perKill[w].maxMs, r.ms);
        }
      }
      if (process.argv.includes('--each')) {
        for (const f of load.stats.failures) {
          const k = kills[windowOf(f.at)];
          log(k ? `${f.what} +${f.at - k.at} ms after ${HOW} of slot ${k.slot}` : `${f.what} before any kill`);
        }
        for (const r of load.stats.slow) {
          const k = kills[windowOf(r.sentAt)];
          log(`slow ${r.what}: ${ms(r.ms)}, sent ${k ? `+${r.sentAt - k.at} ms after ${HOW} of slot ${k.slot}` : 'before any kill'}`);
        }
      }
      log(`Caddy's errors meanwhile: ${caddyErrors(t.caddy.output())}`);
      if (process.argv.includes('--caddy-log')) process.stderr.write(t.caddy.output());
      console.log(`\nPer kill (${HOW}): requests Caddy had in flight on the victim just before, failures until the next kill, requests sent meanwhile that took ${SLOW_MS} ms or more`);
      console.log('| # | in flight on it | failed GETs | failed POSTs | >= 1 s (slowest) | out of the answer | back after | OOMKilled |');
      console.log('|---|---|---|---|---|---|---|---|');
      kills.forEach((k, i) => {
        const p = perKill[i];
        console.log(`| ${i + 1} | ${k.inFlight} | ${p.get} | ${p.post} | ${p.slow}${p.slow ? ` (${ms(p.maxMs)})` : ''} | ${k.leftMs !== undefined ? ms(k.leftMs) : '-'} | ${k.backMs !== undefined ? ms(k.backMs) : 'not in 4 s'} | ${k.oomKilled ?? '-'} |`);
      });
      const total = (f: (p: (typeof perKill)[number]) => number) => perKill.reduce((a, p) => a + f(p), 0);
      const left = kills.flatMap((k) => (k.leftMs === undefined ? [] : [k.leftMs]));
      const back = kills.flatMap((k) => (k.backMs === undefined ? [] : [k.backMs]));
      table(`Replicas: ${kills.length} kills (${HOW}) of one of ${REPLICAS} replicas, one every ${KILL_EVERY_MS / 1000} s, Caddy ${CADDY_VERSION} (${await loadAvg()})`, load.stats, elapsed, [
        ['failed GETs / failed POSTs / requests in flight on the victims', `${total((p) => p.get)} / ${total((p) => p.post)} / ${kills.reduce((a, k) => a + k.inFlight, 0)}${before ? ` (${before} failures before the first kill)` : ''}`, '0 / <= in flight / -'],
        [`requests that took >= ${SLOW_MS} ms (slowest)`, `${load.stats.slow.length} (${ms(load.stats.slow.reduce((a, r) => Math.max(a, r.ms), 0))})`, '0'],
        ['kill -> address out of the DNS answer, p50 / max', `${ms(pct(left, 50))} / ${ms(Math.max(...left))} (${left.length} of ${kills.length})`, ''],
        ['replica back (engine StartedAt), p50 / max', `${ms(pct(back, 50))} / ${ms(Math.max(...back))} (${back.length} of ${kills.length})`, ''],
      ]);
    }
  } finally {
    log('cleaning up');
    await t.close();
  }
}

/** Kills one replica the way HOW says (see the top of this file). */
async function killOne(name: string) {
  const c = runtime.docker.getContainer(name);
  if (HOW === 'kill') return void (await c.kill());
  if (HOW === 'rm') return void (await c.remove({ force: true }));
  if (HOW === 'none') return; // the control: the same load and windows, nothing killed
  // oom: httpd (the container's pid 1) first in the OOM killer's order, then an allocation over the cap.
  const pid = (await c.inspect()).State.Pid;
  writeFileSync(`/proc/${pid}/oom_score_adj`, '1000');
  execFileSync('docker', ['exec', '-d', name, 'sh', '-c', `x=$(head -c ${4 * OOM_CAP_MB * 1048576} /dev/zero | tr '\\0' a)`], { timeout: 10_000 });
}

/** Caddy's in-flight requests per upstream address (its admin API's /reverse_proxy/upstreams). */
async function upstreamCounts(adminUrl: string): Promise<Map<string, number>> {
  const list = (await (await adminFetch(`${adminUrl}/reverse_proxy/upstreams`)).json()) as { address: string; num_requests: number }[] | null;
  return new Map((list ?? []).map((u) => [u.address, u.num_requests]));
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
