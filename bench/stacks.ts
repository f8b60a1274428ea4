// Stacks benchmark (issue 32 "Benchmarks"): a 5-service Compose file (a routed web service, a worker, a
// database stand-in with a volume and a health check, two caches) through the whole daemon as its own
// process (bench/daemon-process.ts: real engine, Caddy, DNS responder, the real Compose loader), beside the same containers made by hand through the
// Docker API the way `docker compose up -d` makes them (Compose itself is not installed here): a network,
// then each service created and started in depends_on order, a service_healthy dependency waited for,
// independent services started together, the web port published by Docker.
//  a. From nothing to every service healthy: svc (POST /api/stacks until the stack deploy succeeded) and by
//     hand (until every health check is healthy and the web port answers), in alternation. Goal: within 1.2x.
//  b. N deploys that change the routed service's environment under load (16 keep-alive clients, GET / and
//     POST /cgi-bin/echo): failed requests with svc (goal 0) and with the by-hand recreate of Compose (stop,
//     remove, create, start the new container: the anchor).
//  c. An update that changes nothing: the PUT's wall time (goal < 200 ms) and whether any container changed.
// Prints figures; not a test. Traffic goes only to loopback; every loop is bounded; everything it created is
// removed at the end, even on error.
//
//   npm run bench:stacks -- [--rounds 5] [--deploys 20] [--clients 16] [--noops 10]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../src/log.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { freePort } from '../test/support/caddy.js';
import { ensureStackImage, STACK_IMAGE } from '../test/support/stack-images.js';
import { startDaemonProcess, type DaemonProcess } from './daemon-process.js';
import { formatCounts, httpStatus, loadAvg, log, ms, numFlag, pct, runMain, sleep, startLoad, until, type LoadStats } from './common.js';

const ROUNDS = numFlag('rounds', 5, 1, 20);
const DEPLOYS = numFlag('deploys', 20, 0, 100);
const CLIENTS = numFlag('clients', 16, 1, 64);
const NOOPS = numFlag('noops', 10, 1, 100);
const runtime = createDockerRuntime({ log: silentLogger });
const docker = runtime.docker;

/** The Compose file: every service on the one local image, its command says which part it plays. */
function composeFile(webPort: number, version: string): string {
  const hc = (test: string) => `    healthcheck: {test: [CMD, test, -f, ${test}], interval: 200ms, timeout: 2s, retries: 3}\n`;
  return (
    'services:\n' +
    `  db:\n    image: ${STACK_IMAGE}\n    command: [/bin/sh, /db]\n    volumes: ["db-data:/data"]\n${hc('/data/ready')}` +
    `  cache:\n    image: ${STACK_IMAGE}\n    command: [/bin/sh, /cache]\n    expose: [6379]\n` +
    `  queue:\n    image: ${STACK_IMAGE}\n    command: [/bin/sh, /cache]\n    expose: [6379]\n` +
    `  worker:\n    image: ${STACK_IMAGE}\n    command: [/bin/sh, /worker]\n${hc('/tmp/ok')}    depends_on:\n      db: {condition: service_healthy}\n      cache: {condition: service_started}\n` +
    `  web:\n    image: ${STACK_IMAGE}\n    command: [/bin/sh, /web]\n    environment: {VERSION: ${version}}\n    ports: ["${webPort}:3000"]\n    depends_on:\n      db: {condition: service_healthy}\n      queue: {condition: service_started}\n` +
    'volumes:\n  db-data: {}\n'
  );
}

// --- svc -------------------------------------------------------------------------------------------

const FINAL = new Set(['success', 'rolled_back', 'cancelled', 'failed']);

async function stackDeployDone(t: DaemonProcess, stackId: number, deployId: number): Promise<string> {
  let status = '';
  await until(`stack deploy ${deployId}`, async () => {
    status = (await t.api('GET', `/api/stacks/${stackId}/deploys/${deployId}`)).body.status as string;
    return FINAL.has(status);
  }, 180_000, 25);
  return status;
}

async function svcColdDeploy(t: DaemonProcess, port: number): Promise<{ ms: number; id: number }> {
  const t0 = performance.now();
  const res = await t.api('POST', '/api/stacks', { name: 'bstk', compose: composeFile(port, 'v1') });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  const status = await stackDeployDone(t, res.body.id, res.body.deploy.id);
  if (status !== 'success') throw new Error(`stack deploy ended ${status}`);
  return { ms: performance.now() - t0, id: res.body.id as number };
}

async function svcDelete(t: DaemonProcess, id: number): Promise<void> {
  const res = await t.api('DELETE', `/api/stacks/${id}?purge=true`);
  if (res.status !== 204) throw new Error(`delete: ${res.status}`);
  await until('svc stack removed', async () => (await runtime.list({ 'svc.instance': t.instance, 'svc.stack': 'bstk' })).length === 0, 60_000, 50);
  await until('svc stack networks removed', async () => (await docker.listNetworks()).every((n) => !n.Name.startsWith(`${t.network}-stack-bstk_`)), 30_000, 50);
}

const svcContainers = async (t: DaemonProcess) => (await runtime.list({ 'svc.instance': t.instance, 'svc.stack': 'bstk' })).map((c) => `${c.name}:${c.id}:${c.running}`).sort();

// --- by hand -------------------------------------------------------------------------------------

const HAND = `svc-bench-stacks-hand-${process.pid}`;
const handNet = `${HAND}_default`;
const handName = (service: string, n = 1) => `${HAND}-${service}-${n}`;
const handVolumes = mkdtempSync(join(tmpdir(), 'svc-bench-stacks-'));

interface HandService {
  name: string;
  cmd: string[];
  env?: string[];
  health?: string;
  bind?: string;
  publish?: number;
}

function handServices(webPort: number, version: string): HandService[] {
  return [
    { name: 'db', cmd: ['/bin/sh', '/db'], health: '/data/ready', bind: 'db-data:/data' },
    { name: 'cache', cmd: ['/bin/sh', '/cache'] },
    { name: 'queue', cmd: ['/bin/sh', '/cache'] },
    { name: 'worker', cmd: ['/bin/sh', '/worker'], health: '/tmp/ok' },
    { name: 'web', cmd: ['/bin/sh', '/web'], env: [`VERSION=${version}`], publish: webPort },
  ];
}

async function handCreateStart(s: HandService, n = 1): Promise<void> {
  const bind = s.bind ? [`${join(handVolumes, s.bind.split(':')[0]!)}:${s.bind.split(':')[1]}`] : [];
  if (s.bind) mkdirSync(join(handVolumes, s.bind.split(':')[0]!), { recursive: true, mode: 0o777 });
  const c = await docker.createContainer({
    name: handName(s.name, n),
    Image: STACK_IMAGE,
    Cmd: s.cmd,
    Env: s.env ?? [],
    Labels: { 'svc-bench': HAND },
    ExposedPorts: s.publish ? { '3000/tcp': {} } : undefined,
    Healthcheck: s.health ? { Test: ['CMD', 'test', '-f', s.health], Interval: 200e6, Timeout: 2e9, Retries: 3 } : undefined,
    HostConfig: { NetworkMode: handNet, Binds: bind, Init: true, PortBindings: s.publish ? { '3000/tcp': [{ HostIp: '127.0.0.1', HostPort: String(s.publish) }] } : undefined },
    NetworkingConfig: { EndpointsConfig: { [handNet]: { Aliases: [s.name] } } },
  });
  await c.start();
}

const healthy = async (name: string) => ((await docker.getContainer(name).inspect()) as { State: { Health?: { Status: string } } }).State.Health?.Status === 'healthy';

/** What `docker compose up -d` does for this file: db, cache and queue together; worker and web once db is healthy. */
async function handColdDeploy(port: number): Promise<number> {
  const s = Object.fromEntries(handServices(port, 'v1').map((x) => [x.name, x]));
  const t0 = performance.now();
  await docker.createNetwork({ Name: handNet, Labels: { 'svc-bench': HAND } });
  await Promise.all([handCreateStart(s.db!), handCreateStart(s.cache!), handCreateStart(s.queue!)]);
  await until('hand db healthy', () => healthy(handName('db')), 60_000, 25);
  await Promise.all([handCreateStart(s.worker!), handCreateStart(s.web!)]);
  await until('hand worker healthy and web answering', async () => (await healthy(handName('worker'))) && (await httpStatus(`http://127.0.0.1:${port}/`, 1000)) === 200, 60_000, 25);
  return performance.now() - t0;
}

async function handRemoveAll(): Promise<void> {
  for (const c of await docker.listContainers({ all: true, filters: { label: [`svc-bench=${HAND}`] } })) await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
  for (const n of await docker.listNetworks({ filters: { label: [`svc-bench=${HAND}`] } })) await docker.getNetwork(n.Id).remove().catch(() => {});
  rmSync(join(handVolumes, 'db-data'), { recursive: true, force: true });
}

/** Compose's recreate of a changed service: stop the old container (10 s grace), remove it, create and start the new one. */
async function handRedeployWeb(port: number, version: string, n: number): Promise<void> {
  const web = handServices(port, version).find((x) => x.name === 'web')!;
  const old = docker.getContainer(handName('web', n - 1));
  await old.stop({ t: 10 }).catch(() => {});
  await old.remove({ force: true });
  await handCreateStart(web, n);
  await until('hand web answering', async () => (await httpStatus(`http://127.0.0.1:${port}/`, 1000)) === 200, 30_000, 25);
}

// --- report --------------------------------------------------------------------------------------

const failed = (st: LoadStats) => [...st.non2xx.values(), ...st.connErrors.values()].reduce((a, b) => a + b, 0);

async function main() {
  await ensureStackImage(runtime);
  const svcPort = await freePort();
  const handPort = await freePort();
  const t = await startDaemonProcess('bench-stacks');
  try {
    log(`a. cold deploys, ${ROUNDS} rounds in alternation (${await loadAvg()})`);
    const svcCold: number[] = [];
    const handCold: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = await svcColdDeploy(t, svcPort);
      svcCold.push(a.ms);
      await svcDelete(t, a.id);
      handCold.push(await handColdDeploy(handPort));
      await handRemoveAll();
      log(`round ${r + 1}: svc ${ms(a.ms)}, by hand ${ms(handCold.at(-1)!)}`);
    }

    log(`b. ${DEPLOYS} deploys of the routed service under load`);
    const { id } = await svcColdDeploy(t, svcPort);
    const svcLoad = startLoad(svcPort, { clients: CLIENTS, maxMs: 30 * 60_000 });
    const svcDeployMs: number[] = [];
    let others = 0;
    const before = (await svcContainers(t)).filter((c) => !c.includes('bstk-web'));
    const t0 = performance.now();
    for (let i = 1; i <= DEPLOYS; i++) {
      const d0 = performance.now();
      const res = await t.api('PUT', `/api/stacks/${id}`, { compose: composeFile(svcPort, `v${i + 1}`) });
      if (res.status !== 200) throw new Error(`update: ${res.status} ${JSON.stringify(res.body)}`);
      const status = await stackDeployDone(t, id, res.body.deploy.id);
      if (status !== 'success') throw new Error(`deploy ${i} ended ${status}`);
      svcDeployMs.push(performance.now() - d0);
    }
    const svcElapsed = performance.now() - t0;
    await svcLoad.stop();
    const after = (await svcContainers(t)).filter((c) => !c.includes('bstk-web'));
    others = before.filter((c) => !after.includes(c)).length;

    await handColdDeploy(handPort);
    const handLoad = startLoad(handPort, { clients: CLIENTS, maxMs: 30 * 60_000 });
    const handDeployMs: number[] = [];
    const h0 = performance.now();
    for (let i = 1; i <= DEPLOYS; i++) {
      const d0 = performance.now();
      await handRedeployWeb(handPort, `v${i + 1}`, i + 1);
      handDeployMs.push(performance.now() - d0);
      await sleep(200);
    }
    const handElapsed = performance.now() - h0;
    await handLoad.stop();
    await handRemoveAll();

    log(`c. ${NOOPS} updates that change nothing`);
    const same = composeFile(svcPort, `v${DEPLOYS + 1}`);
    const noop: number[] = [];
    const noopBefore = await svcContainers(t);
    let steps = 0;
    for (let i = 0; i < NOOPS; i++) {
      const n0 = performance.now();
      const res = await t.api('PUT', `/api/stacks/${id}`, { compose: same });
      noop.push(performance.now() - n0);
      steps += (res.body.deploy?.steps ?? []).length;
    }
    const touched = (await svcContainers(t)).filter((c) => !noopBefore.includes(c)).length;
    await svcDelete(t, id);

    const med = (xs: number[]) => pct(xs, 50);
    console.log(`\nStacks (issue 32): a 5-service stack, svc vs the same containers by hand (Docker API in Compose's order). ${await loadAvg()}; the machine is shared with other helpers' runs.`);
    console.log('| figure | svc | by hand | goal |');
    console.log('|---|---|---|---|');
    console.log(`| a. from nothing to every service healthy, median of ${ROUNDS} (min-max) | ${ms(med(svcCold))} (${ms(Math.min(...svcCold))}-${ms(Math.max(...svcCold))}) | ${ms(med(handCold))} (${ms(Math.min(...handCold))}-${ms(Math.max(...handCold))}) | svc within 1.2x: ${(med(svcCold) / med(handCold)).toFixed(2)}x |`);
    console.log(`| b. ${DEPLOYS} deploys changing the routed service under load: failed requests | ${failed(svcLoad.stats)} of ${svcLoad.stats.total} (${formatCounts(new Map([...svcLoad.stats.non2xx, ...svcLoad.stats.connErrors]))}) | ${failed(handLoad.stats)} of ${handLoad.stats.total} (${formatCounts(new Map([...handLoad.stats.non2xx, ...handLoad.stats.connErrors]))}) | svc 0 |`);
    console.log(`| b. seconds per deploy, median (p95) | ${ms(med(svcDeployMs))} (${ms(pct(svcDeployMs, 95))}) | ${ms(med(handDeployMs))} (${ms(pct(handDeployMs, 95))}) | |`);
    console.log(`| b. requests per second under the deploys | ${Math.round(svcLoad.stats.total / (svcElapsed / 1000))} | ${Math.round(handLoad.stats.total / (handElapsed / 1000))} | |`);
    console.log(`| b. other services' containers changed by the ${DEPLOYS} deploys | ${others} | | 0 |`);
    console.log(`| c. update that changes nothing: PUT wall time, median (max) of ${NOOPS} | ${ms(med(noop))} (${ms(Math.max(...noop))}) | | < 200 ms |`);
    console.log(`| c. containers touched, deploy steps | ${touched}, ${steps} | | 0, 0 |`);
  } finally {
    await handRemoveAll().catch(() => {});
    rmSync(handVolumes, { recursive: true, force: true });
    await t.close();
    for (const n of (await docker.listNetworks()).filter((x) => x.Name.startsWith(`${t.network}-stack-`))) await docker.getNetwork(n.Id).remove().catch(() => {});
  }
}

runMain(main);
