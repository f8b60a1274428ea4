// Benchmark: REST API latency over loopback on a realistic database (1,000 apps with 20 env vars each,
// a quarter of them secret), and the daemon's idle memory. Prints figures; not a test.
// Run: npm run bench:api. The data is seeded in-process, then the daemon runs as its own process (as
// `npm start` runs it) so the client's work does not count against the server's latency. The engine is
// pointed at a socket that does not exist, so nothing here touches Docker.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config.js';
import { freePort } from '../test/support/caddy.js';
import { pct } from './common.js';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { createSealer } from '../src/crypto.js';
import { silentLogger } from '../src/log.js';
import { startDaemon } from '../src/main.js';
import { hashPassword } from '../src/auth/password.js';
import { createApp } from '../src/store/apps.js';
import { setEnv } from '../src/store/env.js';
import { users } from '../src/store/schema/index.js';
import { createSession } from '../src/store/sessions.js';

const APPS = 1_000;
const ENV_PER_APP = 20;
const REQUESTS = 2_000;
const CONCURRENCY = 4;
const NO_ENGINE = 'unix:///nonexistent/svc-bench.sock';

/** Two decimals: single-request latencies are below a millisecond. */
const ms = (v: number) => `${v.toFixed(2)} ms`;
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

function baseEnv(dir: string, port: number, key: string): Record<string, string> {
  return { SVC_DATA_DIR: dir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_ENCRYPTION_KEY: key, DOCKER_HOST: NO_ENGINE, SVC_INSTANCE: 'bench-api', SVC_LOG_LEVEL: 'error' };
}

/** `REQUESTS` GETs from `CONCURRENCY` workers; per-request latency and overall throughput. */
async function measure(label: string, url: (i: number) => string, headers: Record<string, string>, concurrency = CONCURRENCY) {
  const latencies: number[] = [];
  let next = 0;
  let bytes = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const t0 = performance.now();
      const res = await fetch(url(i), { headers });
      const body = await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status}`);
      latencies.push(performance.now() - t0);
      bytes += body.byteLength;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${label.padEnd(22)} p50 ${ms(pct(latencies, 50)).padStart(10)}  p99 ${ms(pct(latencies, 99)).padStart(10)}  ` +
      `${(REQUESTS / seconds).toFixed(0).padStart(6)} req/s  (${REQUESTS} requests, ${concurrency} concurrent, ${(bytes / REQUESTS / 1024).toFixed(1)} KiB each)`,
  );
}

/** Runs `node dist/cli.js serve` on `dir` (with npm start's flags) while `fn` runs against its URL. */
async function withDaemonProcess<T>(dir: string, key: string, fn: (url: string, pid: number) => Promise<T>): Promise<T> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-semi-space-size=1', join(process.cwd(), 'dist/cli.js'), 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...baseEnv(dir, port, key) },
    stdio: 'ignore',
  });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('daemon did not answer /healthz');
      await new Promise((r) => setTimeout(r, 50));
    }
    return await fn(`http://127.0.0.1:${port}`, child.pid!);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** VmRSS of a process after it has been idle for 2 s (start-up garbage collected). */
async function idleRss(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 2_000));
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

async function main() {
  const key = randomBytes(32).toString('base64');
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-api-'));
  const emptyDir = mkdtempSync(join(tmpdir(), 'svc-bench-api-empty-'));
  try {
    const port = await freePort();
    const config = parseConfig(baseEnv(dir, port, key), join(dir, '.env'));
    const daemon = await startDaemon(config, silentLogger);
    const sealer = createSealer(config.encryptionKey);
    const noEnqueue = () => {};

    let t0 = performance.now();
    const ids: number[] = [];
    daemon.db.$client.transaction(() => {
      for (let a = 0; a < APPS; a++) {
        const app = createApp(daemon.db, noEnqueue, { name: `app-${a}`, fallbackPort: 10_000 + a, imageRef: `registry.local/app-${a}:1` }, 'rest');
        ids.push(app.id);
        for (let e = 0; e < ENV_PER_APP; e++) {
          setEnv(daemon.db, sealer, noEnqueue, app.id, { key: `VAR_${e}`, value: `value-${a}-${e}-${'x'.repeat(24)}`, isSecret: e % 4 === 0 }, 'bench');
        }
      }
    })();
    console.log(`seeded ${APPS} apps x ${ENV_PER_APP} env vars in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    t0 = performance.now();
    const user = daemon.db.insert(users).values({ username: 'admin', passwordHash: await hashPassword('benchmark password') }).returning().get();
    console.log(`one password hash (scrypt N=2^17, r=8, p=1): ${ms(performance.now() - t0)}`);
    const headers = { cookie: `session=${createSession(daemon.db, user.id, new Date())}` };

    await daemon.stop();

    console.log('building dist/ ...');
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'ignore' });
    await withDaemonProcess(dir, key, async (url, pid) => {
      // Warm-up (JIT, SQLite page cache), not counted.
      for (let i = 0; i < 200; i++) await (await fetch(`${url}/api/apps/${ids[i]}`, { headers })).arrayBuffer();
      await measure('GET /api/apps', () => `${url}/api/apps`, headers);
      await measure('GET /api/apps/{id}', (i) => `${url}/api/apps/${ids[(i * 7919) % ids.length]}`, headers);
      await measure('GET /api/apps/{id}', (i) => `${url}/api/apps/${ids[(i * 7919) % ids.length]}`, headers, 1);
      await measure('GET /api/auth/me', () => `${url}/api/auth/me`, headers);
      console.log(`RSS after the run, seeded 1,000-app dir: ${mib(await idleRss(pid))}`);
    });
    console.log(`idle RSS, empty data dir:               ${mib(await withDaemonProcess(emptyDir, key, (_url, pid) => idleRss(pid)))}`);
  } finally {
    // The daemons started svc's detached DNS responder for each data dir; it outlives them by design.
    for (const d of [dir, emptyDir]) await stopHelpersOf(d);
    rmSync(dir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

await main();
