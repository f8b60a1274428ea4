// Manifest benchmark: N apps (busybox httpd, port mode) each linked to one of M Redis services, declared in
// one directory that a test daemon watches. Prints: the plan time of the whole directory (parse + state
// read + plan, in-process on the daemon's database), the time from writing the files until the source
// recorded its apply, the time until every app and service runs (bounded by --wait), and for a no-change
// re-apply: its plan+apply time, the keys it enqueued and the Docker API requests the daemon made in the
// seconds after it, against an equal quiet window before (counted by a unix-socket proxy in front of the
// engine). Prints figures; not a test.
//
//   npm run bench:manifests -- [--apps 500] [--services 100] [--wait 900] [--plan-only]
//
// Everything is cleaned up at the end, even on error: the daemon, every container with its instance
// label, its network, the proxy socket and the temp directories.
import { createServer, createConnection, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config.js';
import { createSealer } from '../src/crypto.js';
import { silentLogger } from '../src/log.js';
import { applyManifests } from '../src/manifests/apply.js';
import { memoizedParser } from '../src/manifests/parse.js';
import { openDb } from '../src/store/db.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../test/support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../test/support/service-images.js';
import { loadAvg, log, ms, numFlag, pct, secs, sleep, runMain } from './common.js';

const APPS = numFlag('apps', 500, 1, 1000);
const SERVICES = numFlag('services', 100, 1, 200);
const WAIT_S = numFlag('wait', 900, 10, 3600);
/** Only the plan and apply path on a :memory: database (no daemon, no containers): the figures of the goal. */
const PLAN_ONLY = process.argv.includes('--plan-only');
const PORT_BASE = 20000 + Math.floor(Math.random() * 20) * 1000;

/** A unix socket in front of the engine that counts HTTP requests from the daemon. */
function countingEngineProxy(path: string, target = '/var/run/docker.sock'): { server: Server; count: () => number } {
  let requests = 0;
  const server = createServer((client) => {
    const engine = createConnection(target);
    client.on('data', (chunk) => {
      requests += (chunk.toString('latin1').match(/(^|\r\n)(GET|POST|PUT|DELETE|HEAD) \//g) ?? []).length;
    });
    client.pipe(engine).pipe(client);
    client.on('error', () => engine.destroy());
    engine.on('error', () => client.destroy());
  });
  server.listen(path);
  return { server, count: () => requests };
}

function manifestFiles(): { file: string; text: string }[] {
  const files: { file: string; text: string }[] = [];
  const svc = Array.from({ length: SERVICES }, (_, i) => `apiVersion: svc/v1\nkind: Service\nmetadata: {name: mfb-cache-${i}}\nspec: {type: redis}\n`);
  files.push({ file: 'services.yaml', text: svc.join('---\n') });
  for (let f = 0; f * 50 < APPS; f++) {
    const docs = [];
    for (let i = f * 50; i < Math.min(APPS, (f + 1) * 50); i++) {
      docs.push(
        `apiVersion: svc/v1\nkind: App\nmetadata: {name: mfb-app-${i}}\nspec:\n  image_ref: ${WEB_V1}\n  fallback_port: ${PORT_BASE + i}\n` +
          `  env: [{key: APP_INDEX, value: "${i}"}]\n  services: [{name: mfb-cache-${i % SERVICES}}]\n`,
      );
    }
    files.push({ file: `apps-${String(f).padStart(2, '0')}.yaml`, text: docs.join('---\n') });
  }
  return files;
}

function planOnly() {
  const files = manifestFiles();
  const config = parseConfig({ SVC_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'), SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-mf-')) });
  const keys: string[] = [];
  const deps = { db: openDb(':memory:'), sealer: createSealer(Buffer.alloc(32, 9)), config, log: silentLogger, enqueue: (k: string) => void keys.push(k) } as never;
  const req = { source: 'dir' as const, location: 'bench', files, prune: true, pruneServices: false };
  try {
    const t0 = performance.now();
    applyManifests(deps, { ...req, dryRun: true });
    log(`${APPS} apps, ${SERVICES} services: first plan (nothing exists) ${ms(performance.now() - t0)}`);
    const t1 = performance.now();
    applyManifests(deps, req);
    log(`first apply (create everything, one transaction): ${ms(performance.now() - t1)}, ${keys.length} keys enqueued`);
    for (const [name, parse] of [['parsing every file', undefined], ['unchanged files not parsed again (as the sources do)', memoizedParser()]] as const) {
      const times: number[] = [];
      keys.length = 0;
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        const r = applyManifests(deps, { ...req, parse: parse?.parse });
        parse?.endPass();
        times.push(performance.now() - t);
        if (r.resources.some((x) => x.action !== 'unchanged')) throw new Error('a no-change re-apply planned changes');
      }
      log(`no-change re-apply, ${name}: p50 ${ms(pct(times, 50))}, min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))}; keys enqueued: ${keys.length}`);
    }
  } finally {
    rmSync(config.dataDir, { recursive: true, force: true });
  }
}

async function main() {
  log(await loadAvg());
  if (PLAN_ONLY) return planOnly();
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-mf-'));
  const dir = join(work, 'manifests');
  const sock = join(work, 'engine.sock');
  const engine = countingEngineProxy(sock);
  let t: TestDaemon | undefined;
  try {
    writeFileSync(join(work, '.keep'), '');
    rmSync(dir, { recursive: true, force: true });
    (await import('node:fs')).mkdirSync(dir);
    t = await startTestDaemon('mfbench', { ...serviceImageEnv(), SVC_MANIFESTS_DIR: dir, DOCKER_HOST: `unix://${sock}`, SVC_RESYNC_SECONDS: '3600' });
    const files = manifestFiles();
    log(`${APPS} apps, ${SERVICES} services in ${files.length} files; ${await loadAvg()}`);

    const config = parseConfig({ SVC_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'), SVC_DATA_DIR: t.dataDir });
    const keys: string[] = [];
    const deps = { db: t.daemon.db, sealer: createSealer(Buffer.alloc(32, 9)), config, log: silentLogger, enqueue: (k: string) => void keys.push(k) } as never;
    const dry = () => applyManifests(deps, { source: 'dir', location: dir, files, dryRun: true, prune: true, pruneServices: false });
    const planTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = dry();
      planTimes.push(performance.now() - t0);
      if (r.errors.length) throw new Error(`manifest errors: ${JSON.stringify(r.errors[0])}`);
    }
    log(`plan of the whole directory (nothing exists yet): p50 ${ms(pct(planTimes, 50))}, max ${ms(Math.max(...planTimes))}`);

    const start = performance.now();
    for (const f of files) writeFileSync(join(dir, f.file), f.text);
    const api = t.api.bind(t);
    await waitUntil(async () => ((await api('GET', '/api/manifests')).body as any[]).some((r) => r.source === 'dir' && r.resources.length === APPS + SERVICES), 120);
    const applied = performance.now() - start;
    log(`files written -> applied by the directory source (debounce included): ${secs(applied)}`);

    let last = '';
    const allUp = await waitUntil(async () => {
      const apps = (await api('GET', '/api/apps')).body as any[];
      const services = (await api('GET', '/api/services')).body as any[];
      const up = apps.filter((a) => a.status === 'active').length;
      const sup = services.filter((s) => s.status === 'active').length;
      const line = `${up}/${APPS} apps active, ${sup}/${SERVICES} services active`;
      if (line !== last) log(line);
      last = line;
      return up === APPS && sup === SERVICES;
    }, WAIT_S);
    const upAt = performance.now() - start;
    log(allUp ? `every container runs ${secs(upAt)} after the files were written` : `bounded: after ${secs(upAt)} only ${last}`);

    // Quiet baseline, then a no-change re-apply through the same path the directory source uses.
    const WINDOW_MS = 3000;
    await sleep(2000);
    const b0 = engine.count();
    await sleep(WINDOW_MS);
    const baseline = engine.count() - b0;
    const reapply: number[] = [];
    keys.length = 0;
    const e0 = engine.count();
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = applyManifests(deps, { source: 'dir', location: dir, files, prune: true, pruneServices: false });
      reapply.push(performance.now() - t0);
      if (r.resources.some((x) => x.action !== 'unchanged')) throw new Error('a no-change re-apply planned changes');
    }
    await sleep(WINDOW_MS);
    const during = engine.count() - e0;
    log(`no-change re-apply (plan + apply, 5 runs): p50 ${ms(pct(reapply, 50))}, max ${ms(Math.max(...reapply))}; all ${APPS + SERVICES} unchanged`);
    log(`keys enqueued by it: ${keys.length}; Docker API requests in the ${secs(WINDOW_MS)} after: ${during} (quiet baseline window: ${baseline})`);
  } finally {
    await t?.close().catch(() => {});
    engine.server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

async function waitUntil(cond: () => Promise<boolean>, seconds: number): Promise<boolean> {
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    if (await cond().catch(() => false)) return true;
    await sleep(1000);
  }
  return false;
}

runMain(main);
