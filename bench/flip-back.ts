// Flip-back benchmark, through the whole daemon (real engine, host Caddy, DNS responder), watch window on:
// N times, deploy a version that passes its health check and exits a few seconds later
// (svc-test/web:exits-later), and time from the engine's `die` of that container to the first fresh GET
// through Caddy that the old version (v1) answers again. Meanwhile 16 keep-alive clients send 50 % GET /
// and 50 % POST /cgi-bin/echo through Caddy; failed requests (non-2xx, connection errors) are counted.
// Goal: p50 < 1.5 s.
//
//   npm run bench:flip-back -- [--runs 10] [--clients 16] [--exit-after 3]
//
// Traffic goes only to loopback; every loop is bounded; everything it created is removed at the end.
import { silentLogger } from '../src/log.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_EXITS_LATER, WEB_PORT, WEB_V1 } from '../test/support/images.js';
import { firstAnswer, formatCounts, httpText, loadAvg, log, ms, numFlag, pct, runMain, sleep, startLoad, traceDeploy } from './common.js';

const RUNS = numFlag('runs', 10, 1, 50);
const CLIENTS = numFlag('clients', 16, 1, 64);
const EXIT_AFTER = numFlag('exit-after', 3, 1, 20);
const runtime = createDockerRuntime({ log: silentLogger });

/** Arrival times (wall clock, ms) of the engine's `die` events, by container name. */
function watchDeaths(signal: AbortSignal): Map<string, number> {
  const died = new Map<string, number>();
  void (async () => {
    try {
      for await (const ev of runtime.events(signal)) if (ev.action === 'die') died.set(ev.name, Date.now());
    } catch {
      // aborted at the end
    }
  })();
  return died;
}

async function deploy(t: TestDaemon, appId: number, image: string) {
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as number;
}

async function until<T>(what: string, maxMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + maxMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function main() {
  await ensureTestImages(runtime);
  log(`starting daemon (${await loadAvg()})`);
  const t = await startTestDaemon('bench-flip', { SVC_DEPLOY_WATCH_SECONDS: '120' });
  const stopEvents = new AbortController();
  try {
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'flipb', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    if (app.status !== 201) throw new Error(`create app: ${app.status} ${JSON.stringify(app.body)}`);
    const appId = app.body.id as number;
    await t.api('POST', `/api/apps/${appId}/env`, { key: 'EXIT_AFTER', value: String(EXIT_AFTER) });
    const first = await traceDeploy(t.url, t.token, await deploy(t, appId, WEB_V1), 60_000);
    if (first.status !== 'success') throw new Error(`first deploy ended ${first.status}`);
    const servesV1 = async () => ((await httpText(`http://127.0.0.1:${port}/`, 2_000))?.text.includes(' v1<') ? true : undefined);
    await until('v1 through Caddy', 15_000, servesV1);

    const died = watchDeaths(stopEvents.signal);
    const load = startLoad(port, { clients: CLIENTS, maxMs: RUNS * 60_000 + 30_000 });
    const flipMs: number[] = [];
    const startMs: number[] = [];
    try {
      await sleep(1_000);
      for (let i = 1; i <= RUNS; i++) {
        const id = await deploy(t, appId, WEB_EXITS_LATER);
        const name = `svc-flipb-${id}`;
        const trace = await traceDeploy(t.url, t.token, id, 60_000);
        if (trace.status !== 'success') throw new Error(`deploy ${id} ended ${trace.status}`);
        const diedAt = await until(`${name} to exit`, (EXIT_AFTER + 10) * 1000, async () => died.get(name));
        const backAt = await firstAnswer(port, (r) => r.text.includes(' v1<'), 30_000);
        flipMs.push(backAt - diedAt);
        const detail = await until(`deploy ${id} to end`, 30_000, async () => {
          const a = (await t.api('GET', `/api/apps/${appId}`)).body;
          return a.deploys.find((d: { id: number; status: string }) => d.id === id)?.status === 'auto_rollback' ? a : undefined;
        });
        const liveInfo = await runtime.inspect(detail.live_container_name as string);
        const started = liveInfo?.startedAt ? Date.parse(liveInfo.startedAt) - diedAt : NaN;
        startMs.push(started);
        const st = load.stats;
        log(`run ${i}/${RUNS}: exit -> v1 answering ${ms(backAt - diedAt)} (kept container started after ${ms(started)}); ${st.total} requests, failed ${st.total - st.ok}`);
      }
      await sleep(1_000);
    } finally {
      await load.stop();
    }
    const st = load.stats;
    const non2xx = [...st.non2xx.values()].reduce((a, b) => a + b, 0);
    const conn = [...st.connErrors.values()].reduce((a, b) => a + b, 0);
    console.log(`\nFlip-back: ${flipMs.length} versions that exit ${EXIT_AFTER} s after passing their health check (${await loadAvg()})`);
    console.log('| figure | value | goal |');
    console.log('|---|---|---|');
    console.log(`| new container exit -> old version answering through Caddy, p50 of ${flipMs.length} | ${ms(pct(flipMs, 50))} (min ${ms(Math.min(...flipMs))}, max ${ms(Math.max(...flipMs))}) | < 1.5 s |`);
    console.log(`| new container exit -> kept container started (engine StartedAt), p50 | ${ms(pct(startMs, 50))} (max ${ms(Math.max(...startMs))}) | |`);
    console.log(`| requests under ${CLIENTS} keep-alive clients (50 % GET, 50 % POST) | ${st.total} | |`);
    console.log(`| non-2xx responses | ${non2xx} (${formatCounts(st.non2xx)}) | |`);
    console.log(`| connection errors | ${conn} (${formatCounts(st.connErrors)}) | |`);
    console.log(`| latency p50 / p99 / max | ${pct(st.latencies, 50).toFixed(1)} ms / ${pct(st.latencies, 99).toFixed(1)} ms / ${ms(st.latencies.reduce((a, b) => Math.max(a, b), 0))} | |`);
  } finally {
    stopEvents.abort();
    log('cleaning up');
    await t.close();
  }
}

runMain(main);
