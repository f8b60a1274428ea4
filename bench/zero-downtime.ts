// Zero-downtime benchmark: N consecutive blue/green deploys of one app (alternating v1/v2) through the
// whole daemon while 16 keep-alive clients send 50 % GET / and 50 % POST /cgi-bin/echo through Caddy
// (port-mode route on 127.0.0.1). Counts non-2xx responses and connection errors (resets, refused,
// timeouts) apart, total requests, latency p50/p99/max and seconds per deploy. Prints figures; not a test.
//
//   npm run bench:zero-downtime -- [--deploys 50] [--clients 16]
//
// Traffic goes only to loopback; every loop is bounded in count and time; everything it created is
// removed at the end, even on error.
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, sleep, startLoad, runMain, deployAndWait, waitServed } from './common.js';

const N = numFlag('deploys', 50, 1, 500);
const CLIENTS = numFlag('clients', 16, 1, 64);
const DEPLOY_TIMEOUT_MS = 60_000;

async function main() {
  await ensureTestImages();
  log(`starting daemon (${await loadAvg()})`);
  const t = await startTestDaemon('bench-zdt');
  try {
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'zdt', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    if (app.status !== 201) throw new Error(`create app: ${app.status} ${JSON.stringify(app.body)}`);
    const appId = app.body.id as number;

    const deploy = (image: string) => deployAndWait(t, appId, image, DEPLOY_TIMEOUT_MS);
    const served = (needle: string) => waitServed(port, needle);

    await deploy(WEB_V1);
    await served('v1');
    log(`first deploy done; ${CLIENTS} clients on 127.0.0.1:${port}, ${N} deploys`);

    const load = startLoad(port, { clients: CLIENTS, maxMs: N * DEPLOY_TIMEOUT_MS + 60_000 });
    let finalImage = WEB_V1;
    let deploysDone = 0;
    const t0 = performance.now();
    let t1 = t0;
    try {
      await sleep(2_000); // steady state before the first switch
      const s0 = performance.now();
      for (let i = 1; i <= N; i++) {
        finalImage = i % 2 === 1 ? WEB_V2 : WEB_V1;
        await deploy(finalImage);
        deploysDone++;
        if (i % 10 === 0 || i === N) {
          const st = load.stats;
          log(`${i}/${N} deploys; ${st.total} requests, non-2xx ${[...st.non2xx.values()].reduce((a, b) => a + b, 0)}, conn errors ${[...st.connErrors.values()].reduce((a, b) => a + b, 0)}`);
        }
      }
      t1 = performance.now();
      const perDeploy = (t1 - s0) / deploysDone;
      await sleep(2_000); // traffic after the last switch counts too
      await load.stop();
      const elapsed = performance.now() - t0;
      await served(finalImage === WEB_V2 ? 'v2' : 'v1');

      const st = load.stats;
      const non2xx = [...st.non2xx.values()].reduce((a, b) => a + b, 0);
      const conn = [...st.connErrors.values()].reduce((a, b) => a + b, 0);
      console.log(`\nZero downtime: ${deploysDone} deploys under ${CLIENTS} keep-alive clients (50 % GET /, 50 % POST /cgi-bin/echo) (${await loadAvg()})`);
      console.log('| figure | value | goal |');
      console.log('|---|---|---|');
      console.log(`| requests | ${st.total} (${Math.round(st.total / (elapsed / 1000))}/s over ${(elapsed / 1000).toFixed(1)} s) | |`);
      console.log(`| non-2xx responses | ${non2xx} (${formatCounts(st.non2xx)}) | 0 |`);
      console.log(`| connection errors | ${conn} (${formatCounts(st.connErrors)}) | 0 |`);
      console.log(`| latency p50 / p99 / max | ${pct(st.latencies, 50).toFixed(1)} ms / ${pct(st.latencies, 99).toFixed(1)} ms / ${ms(st.latencies.reduce((a, b) => Math.max(a, b), 0))} | |`);
      console.log(`| seconds per deploy | ${(perDeploy / 1000).toFixed(2)} s | |`);
    } finally {
      await load.stop();
    }
  } finally {
    log('cleaning up');
    await t.close();
  }
}

runMain(main);
