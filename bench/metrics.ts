// Metrics benchmark (issue 22): the cost of one collection round with N running app containers (the
// daemon's CPU and the engine's, per 10 s round, as a share of one core), the same readings taken from
// cgroup files instead (the alternative the collector did not take), and the time of a 7-day range read
// from a database holding 7 days of 51 subjects. Prints figures; not a test.
//
//   npm run bench:metrics -- [--apps 50] [--rounds 6] [--queries 200] [--range-only]
//
// Containers carry a benchmark instance label and are removed at the end, even on error; the database
// is a temp file removed at the end. No network traffic at all.
import Docker from 'dockerode';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../src/store/db.js';
import { createCollector } from '../src/metrics/collector.js';
import { createDockerStats } from '../src/runtime/docker-stats.js';
import { createCgroupStats } from '../src/runtime/cgroup-stats.js';
import type { StatsSource } from '../src/runtime/stats.js';
import { writeMetricRound, type MetricValues } from '../src/store/metrics.js';
import { metricsJson } from '../src/metrics/query.js';
import { TIERS } from '../src/metrics/tiers.js';
import { systemClock } from '../src/controller/clock.js';
import { silentLogger } from '../src/log.js';
import { ensureTestImages, WEB_V1 } from '../test/support/images.js';
import { log, numFlag, pct, runMain } from './common.js';

const APPS = numFlag('apps', 50, 1, 200);
const ROUNDS = numFlag('rounds', 6, 2, 60);
const QUERIES = numFlag('queries', 200, 10, 5000);
const INSTANCE = `bench-metrics-${process.pid}`;

/** CPU ms (user + system) of a process from /proc; undefined when it cannot be read. */
function procCpuMs(pid: number): number | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ = 100
  } catch {
    return undefined;
  }
}
const dockerdPid = (): number | undefined => {
  try {
    return Number(readFileSync('/var/run/docker.pid', 'utf8'));
  } catch {
    return undefined;
  }
};

async function measure(name: string, source: StatsSource, dir: string) {
  const db = openDb(join(dir, `svc-${Math.random().toString(36).slice(2)}.db`));
  const collector = createCollector({ db, source, log: silentLogger, clock: systemClock, dataDir: dir, serviceIds: () => new Map() });
  await collector.round(); // warm: connections, prepared statements, the first readings
  const dpid = dockerdPid();
  const node: number[] = [];
  const engine: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    const d0 = dpid ? procCpuMs(dpid) : undefined;
    const t0 = performance.now();
    await collector.round();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    node.push((c.user + c.system) / 1000);
    const d1 = dpid ? procCpuMs(dpid) : undefined;
    if (d0 !== undefined && d1 !== undefined) engine.push(d1 - d0);
    await new Promise((res) => setTimeout(res, 1000)); // rounds 1 s apart rather than 10 s: same work, shorter bench
  }
  const latest = collector.latest()!;
  const perRound = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const share = (msPerRound: number) => `${((msPerRound / 10_000) * 100).toFixed(2)} % of a core`;
  console.log(`${name}: ${APPS} running containers (${latest.containers.length} read per round, ${latest.containers.filter((c) => c.values.cpu !== null).length} with a CPU rate), ${ROUNDS} rounds:`);
  console.log(`  wall per round: median ${pct(wall, 50).toFixed(0)} ms, max ${Math.max(...wall).toFixed(0)} ms`);
  console.log(`  svc (node) CPU per round: ${perRound(node).toFixed(1)} ms -> at one round per 10 s: ${share(perRound(node))}`);
  if (engine.length) {
    console.log(`  dockerd CPU per round: ${perRound(engine).toFixed(1)} ms (10 ms resolution) -> ${share(perRound(engine))}`);
    console.log(`  together: ${share(perRound(node) + perRound(engine))}`);
  } else console.log('  dockerd CPU: not readable here (/var/run/docker.pid)');
  db.$client.close();
}

async function collectionCost(docker: Docker, dir: string) {
  const ids: string[] = [];
  try {
    log(`starting ${APPS} containers of ${WEB_V1}`);
    for (let i = 1; i <= APPS; i++) {
      const c = await docker.createContainer({
        Image: WEB_V1,
        name: `${INSTANCE}-app${i}`,
        Labels: { 'svc.managed': 'true', 'svc.instance': INSTANCE, 'svc.role': 'app', 'svc.app-id': String(i) },
        HostConfig: { Memory: 64 * 1024 * 1024 },
      });
      ids.push(c.id);
      await c.start();
    }
    const sources = { 'engine one-shot stats': createDockerStats(docker, INSTANCE), 'cgroup files (the daemon\'s choice on a local engine)': createCgroupStats(docker, createDockerStats(docker, INSTANCE)) };
    for (const [name, source] of Object.entries(sources)) await measure(name, source, dir);
  } finally {
    log('removing the containers');
    await Promise.all(ids.map((id) => docker.getContainer(id).remove({ force: true }).catch(() => {})));
  }
}

async function rangeQuery(dir: string) {
  const db = openDb(join(dir, 'range.db'));
  const subjects = [...Array.from({ length: APPS }, (_, i) => `app:${i + 1}`), 'host'];
  const v = (i: number): MetricValues => ({ cpu: (i % 100) / 100, memoryBytes: 50e6 + i, memoryLimitBytes: 64e6, netRxBps: 1000, netTxBps: 500, blockReadBps: 0, blockWriteBps: 4096, containers: 1, diskUsedBytes: null, diskTotalBytes: null });
  const now = Math.floor(Date.now() / 1000);
  const start = now - 7 * 86400;
  // Rounds every 15 min fill the week's tier as many rows as 10 s rounds would; the last day every minute and
  // the last hour every 10 s fill the finer tiers, so the table holds what a week of a real daemon holds.
  log(`filling 7 days of ${subjects.length} subjects`);
  const t0 = performance.now();
  let i = 0;
  for (let ts = start; ts <= now; ts += ts >= now - 3600 ? 10 : ts >= now - 86400 ? 60 : 900) writeMetricRound(db, subjects.map((subject) => ({ subject, values: v(i++) })), ts, TIERS);
  const rows = (db.$client.prepare('SELECT count(*) n FROM metric_samples').get() as { n: number }).n;
  log(`filled in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${rows} rows`);
  for (let q = 0; q < 20; q++) JSON.stringify(metricsJson(db, 'app:1', '7d', now * 1000, undefined)); // JIT warm-up
  const times: number[] = [];
  let points = 0;
  for (let q = 0; q < QUERIES; q++) {
    const t = performance.now();
    const json = JSON.stringify(metricsJson(db, `app:${(q % APPS) + 1}`, '7d', now * 1000, undefined));
    times.push(performance.now() - t);
    points = (JSON.parse(json) as { points: unknown[] }).points.length;
  }
  console.log(`7-day range (${points} points of 15 min, read and serialised as the API answers), ${QUERIES} queries over ${rows} rows:`);
  console.log(`  median ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`);
  db.$client.close();
}

runMain(async () => {
  await ensureTestImages();
  const docker = new Docker();
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-metrics-'));
  try {
    if (!process.argv.includes('--range-only')) await collectionCost(docker, dir);
    await rangeQuery(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
