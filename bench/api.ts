// Benchmark: REST API latency and the daemon's memory at 1,000 apps (20 env vars each, a quarter of them
// secret). Prints figures; not a test. The daemon runs as its own process with npm start's node flags
// (after `npm run build`), so the client's work does not count against the server. Everything goes
// through the API, as a user would: setup, 1,000 creates, 20,000 env writes, then the reads. The engine
// is pointed at a socket that does not exist, so nothing here touches Docker (the reconcilers run and
// fail on the engine, as on a host whose engine is down).
//
//   npm run bench:api -- [--apps 1000] [--env 20] [--no-build] [--mem-breakdown] [--node-arg <flag>]...
//
// Then the pair (issue 36), measured from outside: `GET /api/apps/{id}` (1 client, fresh ids) under a
// concurrent write load (1 client setting env vars, WRITES_PER_S a second), against a bare Node HTTP
// server (node:http, npm start's flags, its own process) answering every GET with the same bytes and every
// POST with 201, under the same write load; ROUNDS rounds alternating which goes first; per round the
// p99 of each, the ratio, and the median of the ratios. `--pair-rounds N` (0 skips it).
//
// --mem-breakdown preloads a SIGUSR2 handler that writes process.memoryUsage() before/after a full GC;
// with it each RSS line also shows heap/external and /proc/<pid>/status's anonymous vs file-backed pages.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/caddy.js';
import { loadAvg, numFlag, pct, runMain, sleep, smapsBreakdown, startFlags } from './common.js';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { buildIfStale, startDaemonProcess as startDaemonOnEngine } from './daemon-process.js';

const APPS = numFlag('apps', 1_000, 1, 5_000);
const ENV_PER_APP = numFlag('env', 20, 0, 100);
const LIST_REQUESTS = numFlag('list-requests', 500, 10, 10_000);
const ONE_REQUESTS = 2_000;
const CONCURRENCY = 4;
const BUILD = !process.argv.includes('--no-build');
const MEM_BREAKDOWN = process.argv.includes('--mem-breakdown');
const NODE_ARGS = process.argv.flatMap((a, i) => (a === '--node-arg' && process.argv[i + 1] ? [process.argv[i + 1]] : []));
const NO_ENGINE = 'unix:///nonexistent/svc-bench.sock';
const PAIR_ROUNDS = numFlag('pair-rounds', 6, 0, 50);
const PAIR_GETS = numFlag('pair-gets', 1_000, 100, 20_000);
const WRITES_PER_S = numFlag('writes-per-s', 20, 0, 500);

/** A bare node:http server as its own process (npm start's flags): `body` for every GET, 201 for every POST. */
async function startBare(dir: string, body: string) {
  const port = await freePort();
  const file = join(dir, 'bare.mjs');
  writeFileSync(join(dir, 'bare.json'), body);
  writeFileSync(
    file,
    `import { createServer } from 'node:http';\nimport { readFileSync } from 'node:fs';\n` +
      `const body = readFileSync(${JSON.stringify(join(dir, 'bare.json'))});\n` +
      `createServer((req, res) => { if (req.method === 'GET') { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); return; }\n` +
      `  req.resume(); req.on('end', () => { res.writeHead(201, { 'content-type': 'application/json' }); res.end('{}'); }); }).listen(${port}, '127.0.0.1');\n`,
  );
  const child = spawn(process.execPath, [...startFlags(), file], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && !(await fetch(url).then((r) => r.ok, () => false)); i++) await sleep(50);
  return { url, stop: () => child.kill('SIGTERM') };
}

/** p99 of `n` GETs of one app (1 client) while a writer posts env vars at WRITES_PER_S to the same server. */
async function underWrites(url: string, headers: Record<string, string>, ids: number[], round: number) {
  let writing = true;
  let writes = 0;
  const writer = (async () => {
    const every = WRITES_PER_S > 0 ? 1000 / WRITES_PER_S : Infinity;
    let next = performance.now();
    while (writing && WRITES_PER_S > 0) {
      const a = ids[(writes * 31) % ids.length];
      const res = await fetch(`${url}/api/apps/${a}/env`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ key: `LOAD_${round}_${writes % 50}`, value: `v-${writes}-${'y'.repeat(24)}` }) });
      await res.arrayBuffer();
      writes++;
      next += every;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  })();
  const r = await drive(PAIR_GETS, 1, async (i) => {
    const res = await fetch(`${url}/api/apps/${ids[(i * 7919 + round) % ids.length]}`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET: HTTP ${res.status}`);
  });
  writing = false;
  await writer;
  return { p50: pct(r.latencies, 50), p99: pct(r.latencies, 99), writes: writes / r.seconds };
}

async function pairs(url: string, headers: Record<string, string>, ids: number[], dir: string) {
  const sample = await (await fetch(`${url}/api/apps/${ids[0]}`, { headers })).text();
  const bare = await startBare(dir, sample);
  try {
    const ratios: number[] = [];
    console.log(`\npair: GET /api/apps/{id} (1 client) under ${WRITES_PER_S} env writes/s, svc against a bare node:http server (${sample.length} bytes), ${PAIR_ROUNDS} rounds (${await loadAvg()})`);
    for (let round = 1; round <= PAIR_ROUNDS; round++) {
      const one = (u: string) => underWrites(u, headers, ids, round);
      let s: Awaited<ReturnType<typeof one>>, b: Awaited<ReturnType<typeof one>>;
      if (round % 2) (s = await one(url)), (b = await one(bare.url));
      else (b = await one(bare.url)), (s = await one(url));
      ratios.push(s.p99 / b.p99);
      console.log(`  round ${round}: svc p50 ${ms(s.p50)} p99 ${ms(s.p99)} (${s.writes.toFixed(0)} writes/s); bare p50 ${ms(b.p50)} p99 ${ms(b.p99)}; p99 ratio ${(s.p99 / b.p99).toFixed(2)}x`);
    }
    console.log(`pair: median of the p99 ratios ${pct(ratios, 50).toFixed(2)}x (goal <= 1.5x) (${await loadAvg()})`);
  } finally {
    bare.stop();
  }
}

/** Two decimals: single-request latencies are below a millisecond. */
const ms = (v: number) => `${v.toFixed(2)} ms`;
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

/** `n` requests from `concurrency` workers; per-request latency (ms) in completion order. */
async function drive(n: number, concurrency: number, one: (i: number) => Promise<void>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await one(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function line(label: string, r: { latencies: number[]; seconds: number }, extra: string) {
  const n = r.latencies.length;
  console.log(
    `${label.padEnd(24)} p50 ${ms(pct(r.latencies, 50)).padStart(10)}  p99 ${ms(pct(r.latencies, 99)).padStart(10)}  ` +
      `${(n / r.seconds).toFixed(0).padStart(6)} req/s  (${n} requests, ${extra})`,
  );
}

/** A daemon process (`node <start flags> dist/cli.js serve`) on `dir`, stopped by `stop()`. */
async function startDaemonProcess(dir: string, key: string) {
  const port = await freePort();
  const memFile = join(dir, 'mem.json');
  const args = [...startFlags(), ...NODE_ARGS];
  if (MEM_BREAKDOWN) {
    const preload = join(dir, 'mem-preload.mjs');
    writeFileSync(
      preload,
      `import { writeFileSync } from 'node:fs';\n` +
        `process.on('SIGUSR2', () => { const before = process.memoryUsage(); globalThis.gc?.(); const after = process.memoryUsage();\n` +
        `  writeFileSync(${JSON.stringify(memFile)}, JSON.stringify({ before, after })); });\n`,
    );
    args.push('--expose-gc', '--import', preload);
  }
  const env = { PATH: process.env.PATH ?? '', SVC_DATA_DIR: dir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_ENCRYPTION_KEY: key, DOCKER_HOST: NO_ENGINE, SVC_INSTANCE: 'bench-api', SVC_LOG_LEVEL: 'error' };
  const child: ChildProcess = spawn(process.execPath, [...args, join(process.cwd(), 'dist/cli.js'), 'serve'], { cwd: dir, env, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('daemon did not answer /healthz');
    await sleep(50);
  }
  const pid = child.pid!;
  /** RSS after 2 s without requests (start-up or load garbage has had a chance to go), with the breakdown when asked. */
  const rss = async (label: string) => {
    await sleep(2_000);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (re: RegExp, text = status) => Number(re.exec(text)?.[1] ?? NaN);
    let detail = '';
    if (MEM_BREAKDOWN) {
      detail = ` (anon ${mib(kb(/RssAnon:\s+(\d+)/))}, file ${mib(kb(/RssFile:\s+(\d+)/))}`;
      if (existsSync(memFile)) unlinkSync(memFile);
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 50 && !existsSync(memFile); i++) await sleep(100);
      const m = JSON.parse(readFileSync(memFile, 'utf8')) as Record<'before' | 'after', Record<string, number>>;
      const f = (o: Record<string, number>) => `heap ${(o.heapUsed / 1048576).toFixed(1)}/${(o.heapTotal / 1048576).toFixed(1)}, external ${(o.external / 1048576).toFixed(1)}`;
      detail += `; before GC ${f(m.before)}; after GC ${f(m.after)}, RSS ${mib(kb(/VmRSS:\s+(\d+)/, readFileSync(`/proc/${pid}/status`, 'utf8')))})`;
    }
    console.log(`RSS ${label.padEnd(40)} ${mib(kb(/VmRSS:\s+(\d+)/)).padStart(10)}${detail}`);
    if (MEM_BREAKDOWN) console.log(`    resident by mapping (MiB): ${smapsBreakdown(pid)}`);
  };
  const stop = async () => {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  };
  /** The daemon's own CPU time so far (user + system, ms): per-request cost that the machine's load does not skew as latency. */
  const cpuMs = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  };
  return { url, pid, rss, stop, cpuMs };
}

/** /proc's clock ticks per second (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

async function json(res: Response, want: number, what: string) {
  const text = await res.text();
  if (res.status !== want) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The read figures: the list, one app (4 and 1 concurrent), and the cheapest authenticated route. */
async function reads(url: string, headers: Record<string, string>, ids: number[]) {
  const get = async (path: string) => {
    const res = await fetch(url + path, { headers });
    const body = await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
    return body.byteLength;
  };
  for (let i = 0; i < 200; i++) await get(`/api/apps/${ids[i % ids.length]}`); // warm-up (JIT, page cache), not counted
  for (let i = 0; i < 5; i++) await get('/api/apps');
  let bytes = 0;
  const list = await drive(LIST_REQUESTS, CONCURRENCY, async () => void (bytes = await get('/api/apps')));
  line('GET /api/apps', list, `${CONCURRENCY} concurrent, ${(bytes / 1024).toFixed(0)} KiB each`);
  const pick = (i: number) => `/api/apps/${ids[(i * 7919) % ids.length]}`;
  line('GET /api/apps/{id}', await drive(ONE_REQUESTS, CONCURRENCY, async (i) => void (await get(pick(i)))), `${CONCURRENCY} concurrent`);
  line('GET /api/apps/{id}', await drive(ONE_REQUESTS, 1, async (i) => void (await get(pick(i)))), '1 concurrent');
  line('GET /api/auth/me', await drive(ONE_REQUESTS, CONCURRENCY, async () => void (await get('/api/auth/me'))), `${CONCURRENCY} concurrent`);
}

/**
 * `--engine`: the pair only, against a daemon on the real engine (bench/daemon-process.ts: its own network,
 * instance and Caddy), as a user's host runs it: without an engine every app key a write enqueues fails and
 * retries with backoff, work a host with an engine never does, which the pair would count against svc.
 */
async function withEngine() {
  console.log(`bench:api --engine, ${APPS} apps; node ${startFlags().join(' ')}; ${await loadAvg()}`);
  // SVC_BENCH_NODE_OPTIONS (e.g. `--import PRELOAD` of a profiler that SIGUSR2 toggles): diagnosis of the pair.
  const t = await startDaemonOnEngine('api', process.env.SVC_BENCH_NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.SVC_BENCH_NODE_OPTIONS } } : {});
  try {
    const headers = { authorization: `Bearer ${t.token}` };
    const ids: number[] = new Array(APPS);
    const created = await drive(APPS, CONCURRENCY, async (a) => {
      const res = await t.api('POST', '/api/apps', { name: `app-${a}`, fallback_port: 10_000 + a, image_ref: `registry.local/app-${a}:1` });
      if (res.status !== 201) throw new Error(`create app: ${res.status} ${JSON.stringify(res.body)}`);
      ids[a] = res.body.id as number;
    });
    line('POST /api/apps', created, `${CONCURRENCY} concurrent`);
    await sleep(5_000); // the creates' passes settle
    if (process.env.SVC_BENCH_NODE_OPTIONS) process.kill(t.pid, 'SIGUSR2'); // a preload's profiler on (diagnosis)
    await pairs(t.url, headers, ids, t.dataDir);
    if (process.env.SVC_BENCH_NODE_OPTIONS) process.kill(t.pid, 'SIGUSR2'), await sleep(2_000);
  } finally {
    await t.close();
  }
}

async function main() {
  if (process.argv.includes('--engine')) return withEngine();
  if (BUILD) buildIfStale(); // dist/ rebuilt only when src/ changed since its last build
  console.log(`bench:api, ${APPS} apps x ${ENV_PER_APP} env vars; node ${[...startFlags(), ...NODE_ARGS].join(' ')}; ${await loadAvg()}`);
  const key = randomBytes(32).toString('base64');
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-api-'));
  let daemon: Awaited<ReturnType<typeof startDaemonProcess>> | undefined;
  try {
    daemon = await startDaemonProcess(dir, key);
    const { url } = daemon;
    await daemon.rss('after start, empty data dir');
    const setup = await fetch(`${url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'benchmark password' }) });
    await json(setup, 201, 'setup');
    const headers = { cookie: setup.headers.get('set-cookie')!.split(';')[0] };
    const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const ids: number[] = new Array(APPS);
    const perRequest = (c0: number, n: number) => `daemon CPU ${((daemon!.cpuMs() - c0) / n).toFixed(2)} ms/request`;
    let cpu0 = daemon.cpuMs();
    const created = await drive(APPS, CONCURRENCY, async (a) => {
      const app = await json(await post('/api/apps', { name: `app-${a}`, fallback_port: 10_000 + a, image_ref: `registry.local/app-${a}:1` }), 201, 'create app');
      ids[a] = app.id as number;
    });
    line('POST /api/apps', created, `${CONCURRENCY} concurrent, ${perRequest(cpu0, APPS)}`);
    if (ENV_PER_APP > 0) {
      cpu0 = daemon.cpuMs();
      const envs = await drive(APPS * ENV_PER_APP, CONCURRENCY, async (i) => {
        const a = Math.floor(i / ENV_PER_APP);
        const e = i % ENV_PER_APP;
        await json(await post(`/api/apps/${ids[a]}/env`, { key: `VAR_${e}`, value: `value-${a}-${e}-${'x'.repeat(24)}`, is_secret: e % 4 === 0 }), 201, 'set env');
      });
      line('POST /api/apps/{id}/env', envs, `${CONCURRENCY} concurrent, ${perRequest(cpu0, APPS * ENV_PER_APP)}`);
    }
    await daemon.rss(`after creating ${APPS} apps`);
    await reads(url, headers, ids);
    await daemon.rss('after the read runs');
    if (PAIR_ROUNDS > 0) await pairs(url, headers, ids, dir);
    if (process.argv.includes('--only-pair')) return;
    await daemon.stop();

    // The same data dir, a fresh daemon: what a restarted daemon holds with 1,000 apps.
    daemon = await startDaemonProcess(dir, key);
    await daemon.rss(`restarted on the ${APPS}-app data dir`);
    await reads(daemon.url, headers, ids);
    await daemon.rss('restarted, after the read runs');
    console.log(`(${await loadAvg()})`);
  } finally {
    await daemon?.stop().catch(() => {});
    // The daemon started svc's detached DNS responder for the data dir; it outlives the daemon by design.
    await stopHelpersOf(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
