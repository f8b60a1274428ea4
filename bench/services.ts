// Benchmark: managed-service provisioning through the reconciler vs the same image started by hand with
// the docker CLI and the same readiness check, per type, in one run; then the RSS of a daemon-shaped
// process (database + reconciler + runtime) holding 20 active services. Prints figures; not a test.
// Run: npm run bench:services (needs the engine; builds the svc-test images when missing).
//
// First, measured from outside (issue 36): the daemon as its own process with npm start's flags
// (bench/daemon-process.ts); `POST /api/services {type: redis}` -> the container answers `AUTH <password>`
// + `PING` with `+OK` `+PONG` over TCP on its address (polled every 10 ms on fresh connections), paired in
// alternation with the same image, command and data mount by hand (`docker run -d` -> the same poll);
// median of pairs. `--redis-pairs N` (default 10, 0 skips it); `--only-redis` skips the in-process part.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { imageFor, kindOf } from '../src/catalog/catalog.js';
import { newestVersion } from '../src/catalog/types.js';
import { createSealer } from '../src/crypto.js';
import { silentLogger } from '../src/log.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { openDb } from '../src/store/db.js';
import { services } from '../src/store/schema/index.js';
import { getServiceByName } from '../src/store/services.js';

import { createServiceReconciler } from '../src/reconcilers/service/reconciler.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../test/support/service-images.js';
import { createService, markServiceDeleted } from '../test/support/commands.js';
import { Bus } from '../src/controller/bus.js';
import { connect } from 'node:net';
import { startDaemonProcess, type DaemonProcess } from './daemon-process.js';
import { loadAvg, numFlag } from './common.js';
import { serviceImageEnv } from '../test/support/service-images.js';

const execFileP = promisify(execFile);
const INSTANCE = 'bench-services';
const NETWORK = 'svc-bench-services';
const TYPES = ['postgres', 'mysql', 'redis', 'garage'] as const;
const HAND_POLL_MS = 250;
const RUNS = 3;
const docker = (args: string[]) => execFileP('docker', args, { maxBuffer: 16 * 1024 * 1024 }).then((r) => r.stdout.trim());
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-services-'));
const db = openDb(join(dir, 'svc.db'));
const sealer = createSealer(Buffer.alloc(32, 5));
const runtime = createDockerRuntime({ log: silentLogger });
const rec = createServiceReconciler({ db, bus: new Bus(), runtime, sealer, log: silentLogger, now: () => Date.now(), settings: { network: NETWORK, instance: INSTANCE, dataDir: dir } });
const status = (name: string) => getServiceByName(db, name)?.status;

/** Drives one key as the work queue does: reconcile, wait requeueAfterMs, again, until `done`. */
async function drive(name: string, done: () => boolean, timeoutMs = 180_000) {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`${name} did not converge (status ${status(name)})`);
    const r = await rec.reconcile(name);
    if (!done() && r.requeueAfterMs === undefined) await pause(100);
    else if (r.requeueAfterMs) await pause(r.requeueAfterMs);
  }
}

async function viaReconciler(type: (typeof TYPES)[number]): Promise<number> {
  const name = `bench-${type}`;
  const t0 = performance.now();
  createService(db, sealer, () => {}, { dataDir: dir, images: SERVICE_TEST_IMAGES, instance: INSTANCE }, { name, type });
  await drive(name, () => status(name) === 'active');
  const ms = performance.now() - t0;
  const row = db.select().from(services).where(eq(services.name, name)).get()!;
  markServiceDeleted(db, () => {}, row, { purge: true, force: true });
  await drive(name, () => status(name) === undefined);
  return ms;
}

const httpStatus = (url: string) =>
  new Promise<number | undefined>((resolve) => {
    const req = request(url, { agent: false, timeout: 2000 }, (res) => (res.resume(), resolve(res.statusCode)));
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });

/** The same image, env, mounts and readiness check, with `docker run` and a polling loop. */
async function byHand(type: (typeof TYPES)[number], run: number): Promise<number> {
  const kind = kindOf(type);
  const name = `svc-bench-hand-${type}`;
  const data = join(dir, 'hand', `${type}-${run}`);
  mkdirSync(data, { recursive: true });
  const creds = kind.generateCredentials(type);
  const cfg = kind.container(creds, { name: type, host: name, dataDir: data });
  const t0 = performance.now();
  const argv = ['run', '-d', '--name', name, '--network', NETWORK, '--label', 'svc.managed=true', '--label', `svc.instance=${INSTANCE}`, '-v', `${data}:${kind.dataPath}`];
  for (const [k, v] of Object.entries(cfg.env)) argv.push('-e', `${k}=${v}`);
  if (type === 'garage') {
    const { garageToml } = await import('../src/catalog/garage.js');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(data, 'garage.toml'), garageToml(creds), { mode: 0o600 });
    argv.push('-v', `${join(data, 'garage.toml')}:/etc/garage.toml:ro`);
  }
  await docker([...argv, imageFor(kind, SERVICE_TEST_IMAGES, newestVersion(type)).image, ...(cfg.cmd ?? [])]);
  const r = kind.readiness(creds);
  for (;;) {
    if (r.kind === 'exec') {
      const envArgs = Object.entries(r.exec.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
      const out = await execFileP('docker', ['exec', ...envArgs, name, ...r.exec.cmd]).then((x) => x.stdout, () => undefined);
      if (out !== undefined && (r.expect === undefined || out.includes(r.expect))) break;
    } else {
      const ip = await docker(['inspect', '-f', `{{(index .NetworkSettings.Networks "${NETWORK}").IPAddress}}`, name]);
      const code = ip ? await httpStatus(`http://${ip}:${r.port}${r.path}`) : undefined;
      if (code !== undefined && code < 500) break;
    }
    await pause(HAND_POLL_MS);
  }
  const ms = performance.now() - t0;
  await docker(['rm', '-f', name]);
  return ms;
}

const REDIS_PAIRS = numFlag('redis-pairs', 10, 0, 100);

/** True when redis at host:6379 answers AUTH + PING with +OK +PONG within 1 s. */
const redisPong = (host: string, password: string) =>
  new Promise<boolean>((resolve) => {
    let got = '';
    const s = connect({ host, port: 6379, timeout: 1000 });
    const done = (ok: boolean) => (s.destroy(), resolve(ok));
    s.once('connect', () => s.write(`AUTH ${password}\r\nPING\r\n`));
    s.on('data', (b) => {
      got += String(b);
      if (got.includes('+PONG')) done(true);
      else if (got.includes('-')) done(false);
    });
    s.once('timeout', () => done(false));
    s.once('error', () => done(false));
    s.once('close', () => done(false));
  });

/** From t0 to the first +PONG of `container` (its address looked up until it has one). */
async function untilPong(container: string, network: string, password: string, t0: number): Promise<number> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    const ip = await docker(['inspect', '-f', `{{with index .NetworkSettings.Networks "${network}"}}{{.IPAddress}}{{end}}`, container]).catch(() => '');
    if (ip && (await redisPong(ip, password))) return performance.now() - t0;
    await pause(10);
  }
  throw new Error(`${container} did not answer PING within 60 s`);
}

async function redisViaDaemon(t: DaemonProcess, i: number): Promise<number> {
  const t0 = performance.now();
  const res = await t.api('POST', '/api/services', { name: `r-${i}`, type: 'redis' });
  if (res.status !== 201) throw new Error(`create service: ${res.status} ${JSON.stringify(res.body)}`);
  const creds = (await t.api('GET', `/api/services/${res.body.id}/credentials`)).body as { password: string };
  const ms = await untilPong(res.body.container_name as string, t.network, creds.password, t0);
  await t.api('DELETE', `/api/services/${res.body.id}?purge=true&force=true`);
  return ms;
}

async function redisByHand(t: DaemonProcess, i: number): Promise<number> {
  const kind = kindOf('redis');
  const name = `svc-bench-hand-redis-${i}`;
  const data = join(t.dataDir, 'hand', `redis-${i}`);
  mkdirSync(data, { recursive: true });
  const creds = kind.generateCredentials('redis');
  const cfg = kind.container(creds, { name: 'redis', host: name, dataDir: data });
  const t0 = performance.now();
  await docker(['run', '-d', '--name', name, '--network', t.network, '--label', `svc.instance=${t.instance}`, '-v', `${data}:${kind.dataPath}`, SERVICE_TEST_IMAGES.redis, ...(cfg.cmd ?? [])]);
  const ms = await untilPong(name, t.network, creds.password as string, t0);
  await docker(['rm', '-f', name]);
  return ms;
}

async function redisPairs() {
  const t = await startDaemonProcess('services', { env: serviceImageEnv() });
  try {
    await redisViaDaemon(t, 0), await redisByHand(t, 0); // warm-up, not counted (svc first: it makes the network)
    const svc: number[] = [];
    const hand: number[] = [];
    for (let i = 1; i <= REDIS_PAIRS; i++) {
      if (i % 2 === 0) hand.push(await redisByHand(t, i)), svc.push(await redisViaDaemon(t, i));
      else svc.push(await redisViaDaemon(t, i)), hand.push(await redisByHand(t, i));
      console.log(`  pair ${i}: svc ${svc.at(-1)!.toFixed(0)} ms, by hand ${hand.at(-1)!.toFixed(0)} ms`);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratios = svc.map((x, k) => x / hand[k]!);
    console.log(`redis create -> PING with its password, from outside, ${REDIS_PAIRS} pairs (${await loadAvg()})`);
    console.log(`  svc (POST /api/services, daemon process) median ${median(svc).toFixed(0)} ms; by hand (docker run) median ${median(hand).toFixed(0)} ms`);
    console.log(`  median of pair ratios ${median(ratios).toFixed(2)}x (goal <= 1.2x)`);
  } finally {
    await t.close();
  }
}

async function rssWith20() {
  global.gc?.();
  const before = process.memoryUsage().rss;
  const names = Array.from({ length: 20 }, (_, i) => `bench-redis-${i + 1}`);
  const t0 = performance.now();
  for (const name of names) createService(db, sealer, () => {}, { dataDir: dir, images: SERVICE_TEST_IMAGES, instance: INSTANCE }, { name, type: 'redis' });
  await Promise.all(names.map((n) => drive(n, () => status(n) === 'active')));
  const allActiveMs = performance.now() - t0;
  // Steady state: one resync pass over all 20, as the daemon does on its timer.
  const t1 = performance.now();
  for (const n of await rec.listNames()) await rec.reconcile(n);
  const resyncMs = performance.now() - t1;
  global.gc?.();
  const after = process.memoryUsage().rss;
  return { before, after, allActiveMs, resyncMs, names };
}

async function cleanup() {
  const ids = (await docker(['ps', '-aq', '--filter', `label=svc.instance=${INSTANCE}`])).split('\n').filter(Boolean);
  if (ids.length) await docker(['rm', '-f', ...ids]).catch(() => {});
  await docker(['network', 'rm', NETWORK]).catch(() => {});
  db.$client.close();
  rmSync(dir, { recursive: true, force: true });
}

try {
  await ensureServiceImages();
  if (REDIS_PAIRS > 0) await redisPairs();
  if (!process.argv.includes('--only-redis')) {
    await runtime.ensureNetwork(NETWORK);
    console.log('service provisioning: create -> active through the reconciler vs docker run + the same readiness check');
    console.log(`median of ${RUNS} runs each; by hand polls every ${HAND_POLL_MS} ms`);
    console.log('type       reconciler   by hand   overhead');
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const type of TYPES) {
      // Alternating order, median of RUNS each: the first container of a run pays cold caches.
      const hands: number[] = [];
      const recs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        if (i % 2 === 0) hands.push(await byHand(type, i)), recs.push(await viaReconciler(type));
        else recs.push(await viaReconciler(type)), hands.push(await byHand(type, i));
      }
      const hand = median(hands);
      const viaRec = median(recs);
      console.log(`${type.padEnd(10)} ${(viaRec / 1000).toFixed(2).padStart(8)} s ${(hand / 1000).toFixed(2).padStart(7)} s ${((viaRec - hand) / 1000).toFixed(2).padStart(8)} s`);
    }
    const m = await rssWith20();
    console.log(`20 redis services: all active in ${(m.allActiveMs / 1000).toFixed(2)} s; one resync pass over them ${m.resyncMs.toFixed(0)} ms`);
    console.log(`daemon RSS: ${mib(m.before)} before, ${mib(m.after)} with 20 active services (+${mib(m.after - m.before)})`);
  }
} finally {
  await cleanup();
}
