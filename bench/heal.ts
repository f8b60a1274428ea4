// Self-healing benchmark, three parts, through the whole daemon (real engine, a Caddy, DNS responder), the
// daemon its own process with npm start's flags (bench/daemon-process.ts: measured from outside, issue 36);
// each kill and removal is paired with the same done by hand (docker kill + docker start, docker rm -f +
// docker run of a container on the same network, polled on its address) and the median ratio printed.
//  1. `docker kill` of the live container to the first successful request through Caddy again, p50 of
//     N kills (waiting past HEAL_RESET_AFTER_MS between kills so each is a first failure, healed at once).
//     Detection is the engine's event stream (no polling in the daemon). Goal: p50 < 1 s, max < 2 s.
//  1b. The same for `docker rm -f` of the live container (recreated, not a crash loop). Same goal.
//  2. A crash-looping app (an image that serves for 3 s, then exits 1): the daemon's CPU over a window
//     (/proc/<pid>/stat of the daemon's process)
//     and the restarts seen (app events `heal`). Goal: < 2 % CPU and the backoff visible (10 s doubling).
//
//   npm run bench:heal -- [--kills 10] [--removes 10] [--crash-seconds 60 (0: skip part 2)]
//
// Each kill and removal also prints its timeline from the daemon's trace marks (bench/heal-timeline.ts):
// events received, the heal's pass, the engine calls made before the create, create, start, DNS sync.
//
// Traffic goes only to loopback; every loop is bounded; everything it created (daemon, Caddy, responder,
// containers, network, temp dir, the flaky image) is removed at the end, even on error.
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { silentLogger } from '../src/log.js';
import { HEAL_RESET_AFTER_MS } from '../src/reconcilers/app/plan.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { readFileSync } from 'node:fs';
import { freePort } from '../test/support/caddy.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../test/support/images.js';
import { healSteps, stepLine, stepTable, type Steps } from './heal-timeline.js';
import { firstAnswer, httpStatus, loadAvg, log, ms, numFlag, pct, sleep, traceDeploy, runMain } from './common.js';
import { startDaemonProcess, type DaemonProcess } from './daemon-process.js';

const run = promisify(execFile);
const KILLS = numFlag('kills', 10, 1, 50);
const REMOVES = numFlag('removes', 10, 0, 50);
const CRASH_SECONDS = numFlag('crash-seconds', 60, 0, 600); // 0: no crash-loop part
const WEB_FLAKY = 'svc-test/web:flaky';
const runtime = createDockerRuntime({ log: silentLogger });

/**
 * The engine's own times (ms) of the container events between two instants, from its event history (a
 * bounded query: `until` ends the stream), for the app's containers: the timeline of one removal and heal.
 */
async function engineTimeline(app: string, sinceMs: number, untilMs: number): Promise<{ id: string; action: string; atMs: number }[]> {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const stream = (await runtime.docker.getEvents({
    since: seconds(sinceMs),
    until: seconds(untilMs),
    filters: { type: ['container'], label: [`svc.app=${app}`] },
  } as never)) as unknown as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { id: string; Action: string; timeNano: number })
    .map((e) => ({ id: e.id, action: e.Action, atMs: e.timeNano / 1e6 }));
}

/** Serves like v1 for 3 s, then exits 1: a crash loop once it is live. */
async function buildFlaky() {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-flaky-'));
  try {
    writeFileSync(join(dir, 'start'), `#!/bin/sh\necho "svc-test web flaky starting"\nhttpd -f -p ${WEB_PORT} -h /www &\nsleep 3\necho "svc-test web flaky: exiting with 1" >&2\nexit 1\n`);
    chmodSync(join(dir, 'start'), 0o755);
    writeFileSync(join(dir, 'Dockerfile'), `FROM ${WEB_V1}\nCOPY start /start\n`);
    await runtime.build(dir, WEB_FLAKY);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function createAndDeploy(t: DaemonProcess, name: string, image: string) {
  const port = await freePort();
  const app = await t.api('POST', '/api/apps', { name, internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
  if (app.status !== 201) throw new Error(`create app: ${app.status} ${JSON.stringify(app.body)}`);
  const id = app.body.id as number;
  const res = await t.api('POST', `/api/apps/${id}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const trace = await traceDeploy(t.url, t.token, res.body.id as number, 60_000);
  if (trace.status !== 'success') throw new Error(`deploy of ${name} ended ${trace.status}`);
  return { id, port };
}

const HAND = 'svc-bench-heal-hand';

/** The hand-made equivalent's container on the daemon's network, labelled with its instance (removed with it). */
async function handRun(t: DaemonProcess): Promise<void> {
  await run('docker', ['run', '-d', '--name', HAND, '--network', t.network, '--label', `svc.instance=${t.instance}`, '--label', 'svc.bench=hand', WEB_V1]);
}

/** Polls the hand container's address (fresh connection, every 10 ms) until it answers 200; Date.now() then. */
async function handServed(t: DaemonProcess): Promise<number> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const ip = (await runtime.inspect(HAND, t.network))?.address;
    if (ip && (await httpStatus(`http://${ip}:${WEB_PORT}/`, 1000)) === 200) return Date.now();
    await sleep(10);
  }
  throw new Error('the hand container did not answer within 30 s');
}

/** By hand after a kill: `docker kill`, then at once `docker start`, to the first 200 on its address. */
async function handKill(t: DaemonProcess): Promise<number> {
  const t0 = Date.now();
  await run('docker', ['kill', HAND]);
  await run('docker', ['start', HAND]);
  return (await handServed(t)) - t0;
}

/** By hand after a removal: `docker rm -f`, then at once `docker run` again, to the first 200 on its address. */
async function handRemove(t: DaemonProcess): Promise<number> {
  const t0 = Date.now();
  await run('docker', ['rm', '-f', HAND]);
  await handRun(t);
  return (await handServed(t)) - t0;
}

/** The daemon's CPU time so far (ms), from /proc: it is its own process. */
const cpuMsOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

const ratioLine = (label: string, svc: number[], hand: number[]) => {
  const pairs = svc.map((x, i) => x / hand[i]!).filter(Number.isFinite);
  return `| ${label} | svc p50 ${ms(pct(svc, 50))} | by hand p50 ${ms(pct(hand, 50))} | median of pair ratios ${pct(pairs, 50).toFixed(2)}x |`;
};

async function main() {
  await ensureTestImages(runtime);
  if (CRASH_SECONDS > 0) await buildFlaky();
  log(`starting daemon (${await loadAvg()})`);
  const t = await startDaemonProcess('heal', { trace: true }); // its trace marks (src/trace.ts) through a preload
  const rec = { get marks() { return t.marks(); }, stop: () => {} };
  const killSteps: Steps[] = [];
  const rmSteps: Steps[] = [];
  try {
    // Part 1: kill -> served again.
    const app = await createAndDeploy(t, 'healme', WEB_V1);
    await firstAnswer(app.port, (r) => r.status === 200, 15_000);
    const recoverMs: number[] = [];
    const restartMs: number[] = [];
    const handKillMs: number[] = [];
    await handRun(t);
    await handServed(t);
    for (let i = 1; i <= KILLS; i++) {
      const live = (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name as string;
      const addrBefore = (await runtime.inspect(live, t.network))?.address;
      const killWall = Date.now();
      await runtime.docker.getContainer(live).kill();
      const backAt = await firstAnswer(app.port, (r) => r.status === 200, 30_000);
      const info = await runtime.inspect(live, t.network);
      const startedWall = info?.startedAt ? Date.parse(info.startedAt) : NaN;
      recoverMs.push(backAt - killWall);
      restartMs.push(startedWall - killWall);
      const tl = healSteps(rec.marks, 'healme', killWall, backAt);
      killSteps.push(tl.steps);
      log(`  timeline (ms after the kill): ${stepLine(tl.steps)}; ${tl.passes} passes; engine calls before the start: ${tl.before}`);
      log(`kill #${i} of ${live}: served again after ${ms(backAt - killWall)} (container restarted ${ms(startedWall - killWall)} after the kill; address ${addrBefore ?? '-'} -> ${info?.address})`);
      handKillMs.push(await handKill(t)); // the pair: the same kill by hand, right after
      log(`  by hand: docker kill + docker start -> first 200 ${ms(handKillMs.at(-1)!)}`);
      if (i < KILLS) await sleep(HEAL_RESET_AFTER_MS + 2_500); // let the failure counter reset
    }
    const heals1 = ((await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string }[]).filter((e) => e.step === 'heal').length;

    // Part 1b: rm -f -> served again (recreated at once; not a crash loop, so no wait for a counter reset).
    const rmMs: number[] = [];
    const recreatedMs: number[] = [];
    const dieToCreateMs: number[] = [];
    const dieToDestroyMs: number[] = [];
    const handRmMs: number[] = [];
    for (let i = 1; i <= REMOVES; i++) {
      await sleep(3_000);
      if (i % 2 === 0) handRmMs.push(await handRemove(t)); // the pair, in alternating order
      const live = (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name as string;
      const oldId = (await runtime.inspect(live, t.network))?.id;
      const rmWall = Date.now();
      await runtime.docker.getContainer(live).remove({ force: true });
      const backAt = await firstAnswer(app.port, (r) => r.status === 200, 30_000);
      // Recreated under its own name once the engine freed it; the API may name it before or after the heal.
      // (Caddy may serve it before svc recorded it: the new container often gets the old address.)
      const liveName = async () => (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name as string;
      let healed = await liveName();
      for (let k = 0; k < 100; k++) {
        const cur = await runtime.inspect(healed);
        if (cur && cur.id !== oldId) break;
        await sleep(20);
        healed = await liveName();
      }
      const info = await runtime.inspect(healed, t.network);
      const startedWall = info?.startedAt ? Date.parse(info.startedAt) : NaN;
      rmMs.push(backAt - rmWall);
      if (Number.isFinite(startedWall)) recreatedMs.push(startedWall - rmWall); // the API may still name the old one
      // svc's part of it: from the old container's `die` to the replacement's `create` (the engine's times);
      // the rest is the engine's create + start, the same as a hand `docker run`.
      const trace = healSteps(rec.marks, 'healme', rmWall, backAt);
      rmSteps.push(trace.steps);
      const tl = await engineTimeline('healme', rmWall - 1_000, Date.now() + 2_000);
      const at = (id: string | undefined, action: string) => tl.find((e) => e.id === id && e.action === action)?.atMs ?? NaN;
      const die = at(oldId, 'die');
      const finite = (xs: number[], x: number) => Number.isFinite(x) && xs.push(x);
      finite(dieToCreateMs, at(info?.id, 'create') - die);
      finite(dieToDestroyMs, at(oldId, 'destroy') - die);
      log(
        `rm -f #${i} of ${live} (now ${healed}): served again after ${ms(backAt - rmWall)} (recreated container started ${ms(startedWall - rmWall)} after the rm; ` +
          `engine: die +${ms(die - rmWall)}, replacement created ${ms(at(info?.id, 'create') - die)} and started ${ms(at(info?.id, 'start') - die)} after the die, old one destroyed ${ms(at(oldId, 'destroy') - die)} after it)`,
      );
      log(`  timeline (ms after the rm): ${stepLine(trace.steps)}; ${trace.passes} passes; engine calls before the create: ${trace.before}`);
      if (i % 2 === 1) await sleep(1_000), handRmMs.push(await handRemove(t));
      log(`  by hand: docker rm -f + docker run -> first 200 ${ms(handRmMs.at(-1)!)}`);
    }
    const healEvents = ((await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[]).filter((e) => e.step === 'heal');
    const recreations = healEvents.filter((e) => e.message.includes('recreated')).length;

    console.log(`\nSelf-healing (${await loadAvg()})`);
    console.log('| figure | value | goal |');
    console.log('|---|---|---|');
    console.log(`| docker kill -> first 200 through Caddy, p50 of ${KILLS} | ${ms(pct(recoverMs, 50))} (p95 ${ms(pct(recoverMs, 95))}, max ${ms(Math.max(...recoverMs))}) | p50 < 1 s, max < 2 s |`);
    console.log(`| docker kill -> container started again (engine StartedAt), p50 | ${ms(pct(restartMs, 50))} (max ${ms(Math.max(...restartMs))}) | |`);
    console.log(`| heal events for the killed app | ${heals1} (kills: ${KILLS}) | |`);
    if (REMOVES > 0) {
      console.log(`| docker rm -f -> first 200 through Caddy, p50 of ${REMOVES} | ${ms(pct(rmMs, 50))} (p95 ${ms(pct(rmMs, 95))}, max ${ms(Math.max(...rmMs))}) | p50 < 1 s, max < 2 s |`);
      console.log(`| docker rm -f -> recreated container started (engine StartedAt), p50 | ${ms(pct(recreatedMs, 50))} (max ${ms(Math.max(...recreatedMs))}) | |`);
      console.log(`| old container's die -> replacement created (engine events; svc's reaction), p50 | ${ms(pct(dieToCreateMs, 50))} (min ${ms(Math.min(...dieToCreateMs))}, max ${ms(Math.max(...dieToCreateMs))}) | |`);
      console.log(`| old container's die -> destroy (the engine's removal), p50 | ${ms(pct(dieToDestroyMs, 50))} (max ${ms(Math.max(...dieToDestroyMs))}) | |`);
      console.log(`| recreations (heal events) | ${recreations} (removals: ${REMOVES}) | |`);
    }
    console.log(`\nPaired with the same by hand (the daemon its own process, npm start's flags; ${await loadAvg()})`);
    console.log('| figure | svc | by hand | ratio |\n|---|---|---|---|');
    console.log(ratioLine('docker kill -> first 200 (svc through Caddy; by hand: docker start, its address)', recoverMs, handKillMs));
    if (REMOVES > 0) console.log(ratioLine('docker rm -f -> first 200 (svc through Caddy; by hand: docker run, its address)', rmMs, handRmMs));
    rec.stop();
    console.log(`\nHeal timelines (${await loadAvg()}): p50 / p95 (count), ms after the kill or rm`);
    console.log('| step | p50 / p95 (n) |');
    console.log('|---|---|');
    for (const row of [...stepTable(killSteps, 'kill'), ...(REMOVES > 0 ? stepTable(rmSteps, 'rm -f') : [])]) console.log(row);
    if (CRASH_SECONDS === 0) return;

    // Part 2: crash loop, CPU of this process (daemon in-process) while the bench only sleeps.
    const flaky = await createAndDeploy(t, 'flaky', WEB_FLAKY);
    const deployedAt = Date.now();
    log(`flaky deployed; measuring CPU over ${CRASH_SECONDS} s`);
    const c0 = cpuMsOf(t.pid);
    const w0 = performance.now();
    await sleep(CRASH_SECONDS * 1000);
    const cpu = cpuMsOf(t.pid) - c0;
    const wall = performance.now() - w0;
    const cpuPct = (100 * cpu) / wall;
    const heals = ((await t.api('GET', `/api/apps/${flaky.id}/events`)).body as { step: string; timestamp: string; message: string }[]).filter(
      (e) => e.step === 'heal',
    );
    const healAt = heals.map((e) => (Date.parse(e.timestamp) - deployedAt) / 1000);
    const gaps = healAt.slice(1).map((x, i) => x - healAt[i]);

    console.log('\n| crash loop figure | value | goal |\n|---|---|---|');
    console.log(`| crash loop: CPU of the daemon process over ${(wall / 1000).toFixed(0)} s | ${cpuPct.toFixed(2)} % (${(cpu / 1000).toFixed(2)} s) | < 2 % |`);
    console.log(`| crash loop: restarts (heal events) | ${heals.length} at +${healAt.map((x) => x.toFixed(0)).join(' s, +')} s after deploy | |`);
    console.log(`| crash loop: gaps between restarts | ${gaps.map((g) => `${g.toFixed(0)} s`).join(', ') || '-'} | 10 s doubling |`);
  } finally {
    rec.stop();
    log('cleaning up');
    await t.close();
    await run('docker', ['rmi', WEB_FLAKY]).catch(() => {});
  }
}

runMain(main);
