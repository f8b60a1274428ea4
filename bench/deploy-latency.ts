// Deploy latency benchmark: trigger (POST /api/apps/{id}/deploys) to `success` through the whole daemon
// (real engine, a Caddy, DNS responder), the daemon its own process with npm start's flags
// (bench/daemon-process.ts: measured from outside, issue 36), p50/p95 over N deploys alternating v1/v2, beside the same
// work done by hand with the docker CLI in the same run (create + start on the same network, GET / on
// the container address every 10 ms until 200, rm -f of the previous one). Per-step breakdown from the
// arrival times of the deploy's SSE events. Prints figures; not a test.
//
//   npm run bench:deploy -- [--deploys 20] [--replicas 1]
//
// With --replicas N the app runs N replicas and the hand run starts N containers as the deploy does (the
// first, then the others together) and waits for each to answer.
//
// Traffic goes only to loopback and to containers it started; every loop is bounded; everything it
// created (daemon, Caddy, responder, containers, network, temp dir) is removed at the end, even on error.
import { execFile } from 'node:child_process';
import Docker from 'dockerode';
import { promisify } from 'node:util';
import { freePort } from '../test/support/caddy.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { startDaemonProcess, type DaemonProcess as TestDaemon } from './daemon-process.js';
import { httpStatus, httpText, loadAvg, log, ms, numFlag, pct, sleep, traceDeploy, type DeployTrace, runMain } from './common.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args)).stdout.trim();
const N = numFlag('deploys', 20, 1, 200);
const R = numFlag('replicas', 1, 1, 10);
const DEPLOY_TIMEOUT_MS = 60_000;
/** --trace: the daemon's trace marks (engine calls, passes) of each deploy, printed per deploy. */
const TRACE = process.argv.includes('--trace');

/** Marks in the order the pipeline emits them; each segment is the time from the previous mark. */
const MARKS: { name: string; match: (e: { step: string; message: string }) => boolean }[] = [
  { name: 'queue -> begin', match: (e) => e.step === 'start' && e.message.startsWith('deploying') },
  { name: 'validate + pull', match: (e) => e.step === 'pull' },
  { name: 'create (staging)', match: (e) => e.step === 'start' && e.message.startsWith('staging') },
  { name: 'health_check', match: (e) => e.step === 'health_check' && e.message.startsWith('healthy') },
  { name: 'route_update', match: (e) => e.step === 'route_update' },
  { name: 'drain + stop_old', match: (e) => e.step === 'stop_old' },
  { name: 'finalize', match: (e) => e.step === 'finalize' },
];

function segments(t0: number, trace: DeployTrace): Record<string, number> {
  const out: Record<string, number> = {};
  let prev = t0;
  for (const m of MARKS) {
    const e = trace.events.find(m.match);
    if (!e) continue;
    out[m.name] = e.at - prev;
    prev = e.at;
  }
  out['-> done on stream'] = trace.doneAt - prev;
  return out;
}

/**
 * When the new version first answers through Caddy (its body names it: v1 and v2 alternate): the time to
 * serving, polled every 10 ms (as the hand runs) on fresh connections from `t0` until `stop()` or 60 s.
 */
function servedAt(port: number, image: string, stopped: () => boolean): Promise<number> {
  const version = image === WEB_V2 ? 'v2' : 'v1';
  return (async () => {
    const end = performance.now() + DEPLOY_TIMEOUT_MS;
    while (performance.now() < end && !stopped()) {
      const at = performance.now();
      const r = await httpText(`http://127.0.0.1:${port}/`, 1000);
      if (r?.status === 200 && r.text.includes(`web ${version}`)) return at;
      await sleep(10); // as the hand run polls its container
    }
    return NaN;
  })();
}

async function daemonDeploy(t: TestDaemon, appId: number, port: number, image: string) {
  const t0 = performance.now();
  const wall0 = performance.timeOrigin + t0;
  let done = false;
  const served = servedAt(port, image, () => done);
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const trace = await traceDeploy(t.url, t.token, res.body.id as number, DEPLOY_TIMEOUT_MS);
  if (trace.status !== 'success') done = true; // the new version will not serve: stop polling
  const servedMs = (await served) - t0;
  done = true;
  if (trace.status !== 'success') throw new Error(`deploy ${res.body.id} ended ${trace.status}: ${JSON.stringify(trace.events.at(-1))}`);
  const switchAt = trace.events.find((e) => e.step === 'route_update')?.at ?? NaN;
  const engine = TRACE
    ? t
        .marks()
        .filter((m) => m.atMs >= wall0 && m.atMs <= wall0 + servedMs && (m.what === 'engine' || m.what === 'pass'))
        .map((m) => `${m.what === 'pass' ? 'pass' : m.name.split(' ')[0]} +${Math.round(m.atMs - wall0)} ${Math.round((m.endMs ?? m.atMs) - m.atMs)}`)
        .join(', ')
    : '';
  return { total: trace.doneAt - t0, toSwitch: switchAt - t0, served: servedMs, seg: segments(t0, trace), engine };
}

const engine = new Docker();

/**
 * The same blue/green steps by hand: create + start new, poll it, rm -f the previous one. `cli`: with the
 * docker CLI (a process per step, as typed); `api`: the same calls on the engine's API from this process
 * (what a script would do; no process start-up in the figure).
 */
async function handDeploy(t: TestDaemon, i: number, image: string, previous: string[] | undefined, how: 'cli' | 'api' = 'cli'): Promise<{ total: number; served: number; names: string[] }> {
  const names = Array.from({ length: R }, (_, r) => (r === 0 ? `svc-bench-hand-${how}-${i}` : `svc-bench-hand-${how}-${i}-r${r}`));
  const t0 = performance.now();
  const startOne = async (name: string) => {
    if (how === 'api') {
      const c = await engine.createContainer({ name, Image: image, Labels: { 'svc.instance': t.instance, 'svc.bench': 'hand' }, HostConfig: { NetworkMode: t.network } });
      await c.start();
      return (await c.inspect()).NetworkSettings.Networks[t.network]!.IPAddress;
    }
    await docker('create', '--name', name, '--network', t.network, '--label', `svc.instance=${t.instance}`, '--label', 'svc.bench=hand', image);
    await docker('start', name);
    return docker('inspect', '-f', `{{(index .NetworkSettings.Networks "${t.network}").IPAddress}}`, name);
  };
  // As the deploy does: the first one, then the others together.
  const addresses = [await startOne(names[0]!), ...(await Promise.all(names.slice(1).map(startOne)))];
  const end = Date.now() + 30_000;
  for (const [k, address] of addresses.entries()) {
    for (;;) {
      if ((await httpStatus(`http://${address}:${WEB_PORT}/`, 1000)) === 200) break;
      if (Date.now() > end) throw new Error(`${names[k]} did not answer within 30 s`);
      await sleep(10);
    }
  }
  const served = performance.now() - t0;
  if (previous) await docker('rm', '-f', ...previous);
  return { total: performance.now() - t0, served, names };
}

async function main() {
  await ensureTestImages();
  log(`starting daemon (${await loadAvg()})`);
  const t = await startDaemonProcess('deploy', { trace: TRACE });
  try {
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'latency', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: R });
    if (app.status !== 201) throw new Error(`create app: ${app.status} ${JSON.stringify(app.body)}`);
    const appId = app.body.id as number;
    // Warm-up, not counted: the first deploy (no previous container) and one hand run.
    log('warm-up deploy');
    await daemonDeploy(t, appId, port, WEB_V1);
    let prevHand = (await handDeploy(t, 0, WEB_V1, undefined)).names;
    let prevApi = (await handDeploy(t, 0, WEB_V1, undefined, 'api')).names;
    const apiServedMs: number[] = [];

    const daemonMs: number[] = [];
    const switchMs: number[] = [];
    const handMs: number[] = [];
    const servedMs: number[] = [];
    const handServedMs: number[] = [];
    const segs: Record<string, number[]> = {};
    for (let i = 1; i <= N; i++) {
      const image = i % 2 === 1 ? WEB_V2 : WEB_V1;
      // The three in turn, the order rotating: svc, CLI, API; CLI, API, svc; API, svc, CLI.
      let d!: Awaited<ReturnType<typeof daemonDeploy>>;
      let h!: Awaited<ReturnType<typeof handDeploy>>;
      let a!: Awaited<ReturnType<typeof handDeploy>>;
      const runs = [async () => void (d = await daemonDeploy(t, appId, port, image)), async () => void (h = await handDeploy(t, i, image, prevHand)), async () => void (a = await handDeploy(t, i, image, prevApi, 'api'))];
      for (let k = 0; k < 3; k++) await runs[(i + k) % 3]!();
      daemonMs.push(d.total);
      servedMs.push(d.served);
      switchMs.push(d.toSwitch);
      for (const [k, v] of Object.entries(d.seg)) (segs[k] ??= []).push(v);
      prevHand = h.names;
      prevApi = a.names;
      apiServedMs.push(a.served);
      handMs.push(h.total);
      handServedMs.push(h.served);
      if (TRACE) log(`  engine calls after the trigger (ms after it, duration): ${d.engine}`);
      log(`#${i} ${image}: daemon ${ms(d.total)} (switch at ${ms(d.toSwitch)}, served at ${ms(d.served)}), by hand ${ms(h.total)} (first 200 at ${ms(h.served)}), by the engine API first 200 at ${ms(a.served)}`);
    }

    const p50 = pct(daemonMs, 50);
    const h50 = pct(handMs, 50);
    console.log(`\nDeploy latency, ${N} deploys alternating v1/v2, ${R} replica(s) (${await loadAvg()})`);
    console.log('| | p50 | p95 | max |');
    console.log('|---|---|---|---|');
    console.log(`| svc: trigger -> success | ${ms(p50)} | ${ms(pct(daemonMs, 95))} | ${ms(Math.max(...daemonMs))} |`);
    console.log(`| svc: trigger -> route switched | ${ms(pct(switchMs, 50))} | ${ms(pct(switchMs, 95))} | ${ms(Math.max(...switchMs))} |`);
    console.log(`| by hand (docker CLI) | ${ms(h50)} | ${ms(pct(handMs, 95))} | ${ms(Math.max(...handMs))} |`);
    console.log(`| svc: trigger -> new version served through Caddy | ${ms(pct(servedMs, 50))} | ${ms(pct(servedMs, 95))} | ${ms(Math.max(...servedMs))} |`);
    console.log(`| by hand: create + start + first 200 | ${ms(pct(handServedMs, 50))} | ${ms(pct(handServedMs, 95))} | ${ms(Math.max(...handServedMs))} |`);
    console.log(`ratio p50 svc/hand: ${(p50 / h50).toFixed(2)}x, p95: ${(pct(daemonMs, 95) / pct(handMs, 95)).toFixed(2)}x (goal: p50 < 2 s and <= 1.3x)`);
    console.log(`time to serving, ratio p50 svc/hand: ${(pct(servedMs, 50) / pct(handServedMs, 50)).toFixed(2)}x (issue 19 goal: within 1.25x)`);
    const pairs = servedMs.map((x, i) => x / handServedMs[i]!);
    const apiPairs = servedMs.map((x, i) => x / apiServedMs[i]!);
    console.log(`by the engine API: create + start + first 200 p50 ${ms(pct(apiServedMs, 50))} (p95 ${ms(pct(apiServedMs, 95))})`);
    console.log(`time to serving, median of the ${N} pair ratios: ${pct(pairs, 50).toFixed(2)}x the docker CLI, ${pct(apiPairs, 50).toFixed(2)}x the engine API (issue 36 goal: <= 1.2x)`);
    console.log('\nPer-step breakdown (SSE arrival times; each step = time since the previous mark)');
    console.log('| step | p50 | p95 | mean | share of mean total |');
    console.log('|---|---|---|---|---|');
    const meanTotal = daemonMs.reduce((a, b) => a + b, 0) / daemonMs.length;
    for (const [k, v] of Object.entries(segs)) {
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      console.log(`| ${k} | ${ms(pct(v, 50))} | ${ms(pct(v, 95))} | ${ms(mean)} | ${((100 * mean) / meanTotal).toFixed(1)} % |`);
    }
  } finally {
    log('cleaning up');
    await t.close();
  }
}

runMain(main);
