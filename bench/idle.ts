// Idle footprint benchmark (issues 19 and 22): the daemon as its own process (`node <npm start's flags>
// dist/cli.js serve` after `npm run build`), its own network, instance, DNS and API ports and temp data dir,
// and by default in host proxy mode, so the Caddy it runs is one of its processes like dnsmasq and the guard
// scripts (`--proxy external`: a Caddy the bench starts, reported apart, as before). 50 apps are created and
// deployed (busybox httpd). The RSS (/proc/<pid>/status VmRSS) of every process svc runs is sampled every
// second from the daemon's start on, through the deploys and then over a 60 s idle window, and the same
// processes counted as PSS, USS and distinct pages (footprint.ts says what each means); CPU
// (/proc/<pid>/stat utime+stime) over that window. Prints figures; not a test. `--entry` runs another
// build of the daemon (a baseline built elsewhere) for alternated comparisons.
//
//   npm run bench:idle -- [--apps 50] [--seconds 60] [--no-build] [--proxy host|external] [--mem-breakdown] [--node-arg <flag>]... [--env K=V]... [--entry dist/cli.js]
//                         [--diag-dir <dir> [--diag-light]]
//
// The daemon gets the environment assignments of `npm start` too (MALLOC_ARENA_MAX=2), then `--env`.
// `--diag-dir` (diagnosis only: it changes the figures) writes into <dir> a CPU profile of the idle window
// (idle.cpuprofile, over the inspector inside the daemon) and heap snapshots after the start, right after
// the deploys and at the end of the idle window (1-start.heapsnapshot, ...), for Chrome's DevTools.
//
// Traffic goes only to loopback; every loop is bounded; at the end (even on error) the daemon is
// stopped, every container with its instance label and its network removed, its helpers stopped
// (by pid, found by the paths under the temp data dir in their arguments), Caddy stopped, the temp dir removed.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startCaddy, type TestCaddy } from '../test/support/caddy.js';
import { isolatedDaemonEnv, removeInstance } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../test/support/images.js';
import { benchToken, loadAvg, log, numFlag, rawApi, sleep, runMain, smapsBreakdown, startEnv, startFlags } from './common.js';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { footprint, type Footprint } from './footprint.js';

const run = promisify(execFile);
const APPS = numFlag('apps', 50, 1, 200);
const SECONDS = numFlag('seconds', 60, 5, 600);
const BUILD = !process.argv.includes('--no-build');
/** Opt-in diagnosis: preload a SIGUSR2 handler (and --expose-gc) that writes process.memoryUsage() before and after a full GC. */
const MEM_BREAKDOWN = process.argv.includes('--mem-breakdown');
/** Extra node flags for the daemon, for experiments: `--node-arg --max-semi-space-size=2` (repeatable). */
const NODE_ARGS = process.argv.flatMap((a, i) => (a === '--node-arg' && process.argv[i + 1] ? [process.argv[i + 1]] : []));
/** Extra environment for the daemon, for experiments: `--env MALLOC_ARENA_MAX=2` (repeatable). */
const EXTRA_ENV = Object.fromEntries(process.argv.flatMap((a, i) => (a === '--env' && /^[A-Z_][A-Z0-9_]*=/.test(process.argv[i + 1] ?? '') ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])));
/** `host` (default): svc starts and owns its Caddy, counted with its processes; `external`: a Caddy the bench starts, reported apart. */
const PROXY = process.argv.includes('--proxy') && process.argv[process.argv.indexOf('--proxy') + 1] === 'external' ? 'external' : 'host';
/** The daemon's entry file, for experiments (default dist/cli.js, what `npm start` runs). */
const ENTRY = process.argv.includes('--entry') ? process.argv[process.argv.indexOf('--entry') + 1] : 'dist/cli.js';
/** Opt-in diagnosis: where the idle window's CPU profile and the heap snapshots go. */
const DIAG_DIR = process.argv.includes('--diag-dir') ? resolve(process.argv[process.argv.indexOf('--diag-dir') + 1]) : undefined;
/** With --diag-dir: only memoryUsage and the resident split at each point (no profile or snapshot to perturb them). */
const DIAG_LIGHT = process.argv.includes('--diag-light');
const INSTANCE = 'bench-idle';
const NETWORK = 'svc-bench-idle';
const CLK_TCK = 100; // getconf CLK_TCK on Linux

function procStat(pid: number): { cpuTicks: number; rssKb: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from #3 (state) on
    const cpuTicks = Number(fields[11]) + Number(fields[12]); // utime (#14) + stime (#15)
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
    return { cpuTicks, rssKb };
  } catch {
    return undefined;
  }
}

/** What a helper process is, from its command line. */
function helperKind(pid: number): 'dnsmasq' | 'caddy' | 'guard' | 'other' {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return 'other'; // gone since it was listed (its RSS then reads as 0)
  }
  if (args[1]?.endsWith('helper-guard.sh')) return 'guard';
  if (args[0]?.endsWith('dnsmasq')) return 'dnsmasq';
  if (args[0]?.endsWith('caddy')) return 'caddy';
  return 'other';
}

/** Pids whose command line mentions `needle` (helpers: their arguments name paths under the data dir). */
function pidsMatching(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').some((a) => a.includes(needle))) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function main() {
  if (BUILD) {
    log('npm run build');
    await run('npm', ['run', 'build'], { maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string }) => {
      // tsc emits even with type errors (another engineer may be mid-edit); only a missing output is fatal.
      log(`build reported errors (continuing with what it emitted): ${String(err.stdout ?? '').split('\n').slice(0, 5).join(' | ')}`);
    });
  }
  await ensureTestImages();
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-idle-'));
  let caddy: TestCaddy | undefined;
  let child: ChildProcess | undefined;
  let exited = false;
  let out = '';
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    if (PROXY === 'external') caddy = await startCaddy();
    mkdirSync(join(dataDir, 'manifests'));
    const isolated = await isolatedDaemonEnv({ dataDir, caddyAdminUrl: caddy?.adminUrl ?? `http://127.0.0.1:${await freePort()}`, network: NETWORK, instance: INSTANCE });
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dataDir,
      ...isolated,
      SVC_PROXY_MODE: PROXY,
      SVC_LOG_LEVEL: 'warn',
      ...startEnv(),
      ...EXTRA_ENV,
    };
    const port = Number(env.SVC_PORT);
    // cwd = the data dir: no `.env` of the repo is read, nothing is written next to it.
    const memFile = join(dataDir, 'mem.json');
    const nodeArgs: string[] = [...startFlags(), ...NODE_ARGS];
    if (MEM_BREAKDOWN) {
      const preload = join(dataDir, 'mem-preload.mjs');
      writeFileSync(
        preload,
        `import { writeFileSync } from 'node:fs';\n` +
          `process.on('SIGUSR2', () => { const before = process.memoryUsage(); globalThis.gc?.(); const after = process.memoryUsage();\n` +
          `  writeFileSync(${JSON.stringify(memFile)}, JSON.stringify({ before, after })); });\n`,
      );
      nodeArgs.push('--expose-gc', '--import', preload);
    }
    if (DIAG_DIR) {
      mkdirSync(DIAG_DIR, { recursive: true });
      const preload = join(dataDir, 'diag-preload.mjs');
      // SIGWINCH starts the CPU profile, the next one writes it; SIGURG likewise for a sampling heap profile
      // (every allocation sampled, collected ones included); SIGTTIN writes process.memoryUsage(), SIGTTOU a heap snapshot.
      writeFileSync(
        preload,
        `import { Session } from 'node:inspector';\nimport { writeFileSync } from 'node:fs';\nimport { writeHeapSnapshot } from 'node:v8';\n` +
          `const dir = ${JSON.stringify(DIAG_DIR)}; const s = new Session(); s.connect(); let on = false; let hp = false; let n = 0; let m = 0;\n` +
          `process.on('SIGWINCH', () => { if (!on) { on = true; s.post('Profiler.enable', () => s.post('Profiler.start')); return; }\n` +
          `  s.post('Profiler.stop', (err, r) => { if (!err) writeFileSync(dir + '/idle.cpuprofile', JSON.stringify(r.profile)); writeFileSync(dir + '/idle.done', ''); }); });\n` +
          `process.on('SIGURG', () => { if (!hp) { hp = true; s.post('HeapProfiler.enable', () => s.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })); return; }\n` +
          `  s.post('HeapProfiler.stopSampling', (err, r) => { writeFileSync(dir + '/deploys.heapprofile', JSON.stringify(err ? { err: String(err) } : r.profile)); writeFileSync(dir + '/heap.done', ''); }); });\n` +
          `process.on('SIGTTIN', () => { writeFileSync(dir + '/memory' + ++m + '.json', JSON.stringify(process.memoryUsage())); });\n` +
          `process.on('SIGTTOU', () => { writeHeapSnapshot(dir + '/' + ++n + '.heapsnapshot'); writeFileSync(dir + '/snap' + n + '.done', ''); });\n`,
      );
      nodeArgs.push('--import', preload);
    }
    /** Diagnosis: signals the daemon and waits (bounded) for the preload's marker file. */
    const diag = async (signal: NodeJS.Signals, marker: string) => {
      if (!DIAG_DIR || !child?.pid) return;
      process.kill(child.pid, signal);
      for (let i = 0; i < 600 && !existsSync(join(DIAG_DIR, marker)); i++) await sleep(100);
    };
    let snaps = 0;
    let mems = 0;
    /** memoryUsage() and the resident split by mapping, then a heap snapshot (which grows the process: after the figures). */
    const snapshot = async (what: string) => {
      if (!DIAG_DIR) return;
      await diag('SIGTTIN', `memory${++mems}.json`);
      const m = JSON.parse(readFileSync(join(DIAG_DIR, `memory${mems}.json`), 'utf8')) as Record<string, number>;
      log(`${what}: memoryUsage (MiB) ${Object.entries(m).map(([k, v]) => `${k} ${(v / 1048576).toFixed(1)}`).join(', ')}; resident by mapping: ${smapsBreakdown(pid)}`);
      if (!DIAG_LIGHT) await diag('SIGTTOU', `snap${++snaps}.done`);
    };
    child = spawn(process.execPath, [...nodeArgs, resolve(ENTRY), 'serve'], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-20_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', () => (exited = true));
    const pid = child.pid!;
    const url = `http://127.0.0.1:${port}`;

    // Every second from now on: the daemon's RSS and that of every helper it runs (found again each time:
    // they start during the first proxy pass). `phase` tags each sample.
    let phase: 'start' | 'deploying' | 'settling' | 'idle' = 'start';
    const samples: Sample[] = [];
    const sample = () => {
      const d = procStat(pid);
      if (!d) return;
      const helperPids = pidsMatching(join(dataDir, 'proxy'));
      const helpers = helperPids.map((p) => ({ kind: helperKind(p), rssKb: procStat(p)?.rssKb ?? 0 }));
      const kb = (k?: string) => helpers.filter((h) => k === undefined || h.kind === k).reduce((a, h) => a + h.rssKb, 0);
      const counted = [pid, ...helperPids.filter((_, i) => PROXY === 'host' || helpers[i].kind !== 'caddy')];
      samples.push({ phase, daemonKb: d.rssKb, caddyKb: kb('caddy'), helpersKb: kb() - kb('caddy'), all: footprint(counted) });
    };
    // Never throws out of the timer: an exception there would end the bench without its clean-up.
    sampler = setInterval(() => {
      try {
        sample();
      } catch (err) {
        log(`sample failed: ${err}`);
      }
    }, 1000);

    const end = Date.now() + 20_000;
    for (;;) {
      if (exited) throw new Error(`daemon exited: ${out}`);
      const ok = await fetch(`${url}/api/auth/setup`, { method: 'GET' }).then(() => true, () => false);
      if (ok) break;
      if (Date.now() > end) throw new Error(`daemon did not listen within 20 s: ${out}`);
      await sleep(100);
    }
    const raw = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => rawApi(url, method, path, body, headers);
    const auth = { authorization: `Bearer ${await benchToken(url)}` };
    const api = (method: string, path: string, body?: unknown) => raw(method, path, body, auth);

    // The proxy (and with it Caddy in host mode) is up before the first app: wait for it, then one sample.
    for (let i = 0; i < 100 && !samples.some((s) => s.caddyKb > 0 || PROXY === 'external'); i++) await sleep(100);
    await sleep(1000);
    const afterStart = samples.at(-1);
    log(`daemon pid ${pid} up, RSS ${mib(afterStart?.daemonKb ?? NaN)}; creating and deploying ${APPS} apps`);
    await snapshot('after start');
    if (DIAG_DIR && !DIAG_LIGHT) process.kill(pid, 'SIGURG');
    phase = 'deploying';
    const deployIds: number[] = [];
    const t0 = Date.now();
    // freePort() can hand out a port again until Caddy listens on it: keep the ones given out apart.
    // svc's own ports too: its HTTP/HTTPS ports stay free until a domain route makes Caddy listen there.
    const used = new Set<number>(['SVC_PORT', 'SVC_HTTP_PORT', 'SVC_HTTPS_PORT', 'SVC_DNS_PORT'].map((k) => Number(isolated[k])).filter(Boolean));
    const newPort = async () => {
      for (;;) {
        const p = await freePort();
        if (!used.has(p)) return used.add(p), p;
      }
    };
    for (let i = 0; i < APPS; i++) {
      const app = await api('POST', '/api/apps', { name: `idle-${i}`, internal_port: WEB_PORT, access_mode: 'port', fallback_port: await newPort() });
      if (app.status !== 201) throw new Error(`create app ${i}: ${app.status} ${JSON.stringify(app.body)}`);
      const d = await api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
      if (d.status !== 202) throw new Error(`deploy app ${i}: ${d.status} ${JSON.stringify(d.body)}`);
      deployIds.push(d.body.id as number);
    }
    const pending = new Set(deployIds);
    const deadline = Date.now() + 10 * 60_000;
    while (pending.size > 0) {
      if (exited) throw new Error(`daemon exited: ${out}`);
      if (Date.now() > deadline) throw new Error(`${pending.size} deploys not finished within 10 min`);
      for (const id of [...pending]) {
        const d = await api('GET', `/api/deploys/${id}`);
        if (d.body.status === 'success') pending.delete(id);
        else if (['failed', 'auto_rollback', 'cancelled'].includes(d.body.status)) throw new Error(`deploy ${id} ended ${d.body.status}: ${d.body.error}`);
      }
      await sleep(1000);
    }
    const deployedIn = (Date.now() - t0) / 1000;
    phase = 'settling';
    sample();
    const rightAfter = samples.at(-1)!;
    if (!DIAG_LIGHT) await diag('SIGURG', 'heap.done');
    await snapshot('right after the deploys');
    const running = (await run('docker', ['ps', '-q', '--filter', `label=svc.instance=${INSTANCE}`])).stdout.trim().split('\n').filter(Boolean).length;
    log(`${APPS} apps deployed in ${deployedIn.toFixed(1)} s (${running} containers running); settling 10 s`);
    await sleep(10_000);

    // CPU over the idle window: the daemon, and each kind of helper.
    const helpers = pidsMatching(join(dataDir, 'proxy')).map((p) => ({ pid: p, kind: helperKind(p) }));
    const s0 = procStat(pid)!;
    const h0 = new Map(helpers.map((h) => [h.pid, procStat(h.pid)]));
    const w0 = performance.now();
    phase = 'idle';
    if (DIAG_DIR && !DIAG_LIGHT) process.kill(pid, 'SIGWINCH');
    await sleep(SECONDS * 1000);
    if (exited) throw new Error(`daemon gone: ${out}`);
    const s1 = procStat(pid)!;
    const wall = (performance.now() - w0) / 1000;
    clearInterval(sampler);
    if (!DIAG_LIGHT) await diag('SIGWINCH', 'idle.done');
    await snapshot('end of the idle window');
    const cpu = (100 * (s1.cpuTicks - s0.cpuTicks)) / CLK_TCK / wall;
    const cpuOf = (k: string) => (helpers.filter((h) => h.kind === k).reduce((a, h) => a + ((procStat(h.pid)?.cpuTicks ?? 0) - (h0.get(h.pid)?.cpuTicks ?? 0)), 0) / CLK_TCK / wall) * 100;
    const rssOf = (k: string) => helpers.filter((h) => h.kind === k).reduce((a, h) => a + (procStat(h.pid)?.rssKb ?? 0), 0);

    const all = (s: Sample) => s.daemonKb + s.helpersKb + (PROXY === 'host' ? s.caddyKb : 0);
    const noCaddy = (s: Sample) => s.daemonKb + s.helpersKb;
    const idle = samples.filter((s) => s.phase === 'idle');
    const sinceDeploys = samples.filter((s) => s.phase !== 'start' && s.phase !== 'deploying');
    const maxOf = (xs: Sample[], f: (s: Sample) => number) => Math.max(...xs.map(f));
    const lastMax = (xs: Sample[], f: (s: Sample) => number) => `${mib(f(xs.at(-1)!))} / ${mib(maxOf(xs, f))}`;
    const caddyName = PROXY === 'host' ? 'Caddy (svc runs it: host proxy mode)' : 'Caddy (the bench\'s, external mode: not counted)';

    console.log(`\nIdle footprint with ${APPS} running apps, ${SECONDS} s idle window, proxy mode ${PROXY} (${Object.entries({ ...startEnv(), ...EXTRA_ENV }).map(([k, v]) => `${k}=${v} `).join('')}node ${[...startFlags(), ...NODE_ARGS].join(' ')}) (${await loadAvg()})`);
    console.log('RSS of all of svc\'s processes = the daemon + dnsmasq + the guard scripts' + (PROXY === 'host' ? ' + Caddy' : '') + ', sampled every second.');
    console.log('| figure | value | goal |');
    console.log('|---|---|---|');
    console.log(`| **all of svc's processes, idle: last / max** | ${lastMax(idle, all)} | < 100 MB |`);
    console.log(`| **all of svc's processes, max from the end of the 50 deploys on** (right after: ${mib(all(rightAfter))}) | ${mib(maxOf(sinceDeploys, all))} | < 100 MB |`);
    console.log(`| all of svc's processes, max during the deploys | ${mib(maxOf(samples.filter((s) => s.phase === 'deploying'), all))} | |`);
    const way = (k: keyof Footprint) => (s: Sample) => s.all[k] ?? NaN;
    for (const [k, what] of [['pssKb', 'PSS (a shared page split among all that map it, other node processes on the machine included)'], ['ussKb', 'USS (private pages only)'], ['uniqueKb', 'distinct pages (each once, shared or not: what they occupy on a host of their own)']] as const) {
      if (k === 'uniqueKb' && idle.some((s) => s.all.uniqueKb === undefined)) continue;
      console.log(`| all of svc's processes, ${what}: idle last / max; max since the deploys | ${lastMax(idle, way(k))}; ${mib(maxOf(sinceDeploys, way(k)))} | |`);
    }
    if (PROXY === 'host') console.log(`| the same without Caddy, idle: last / max; max since the deploys | ${lastMax(idle, noCaddy)}; ${mib(maxOf(sinceDeploys, noCaddy))} | |`);
    console.log(`| daemon alone: after start (no apps) / right after the deploys / idle last / idle max | ${mib(afterStart?.daemonKb ?? NaN)} / ${mib(rightAfter.daemonKb)} / ${mib(idle.at(-1)!.daemonKb)} / ${mib(maxOf(idle, (s) => s.daemonKb))} | |`);
    console.log(`| **daemon CPU idle** (utime+stime) | ${cpu.toFixed(2)} % of one core (${s1.cpuTicks - s0.cpuTicks} ticks in ${wall.toFixed(1)} s) | < 0.5 % |`);
    for (const k of ['caddy', 'dnsmasq', 'guard', 'other']) {
      const n = helpers.filter((h) => h.kind === k).length;
      if (n) console.log(`| ${k === 'caddy' ? caddyName : k} (${n} process${n > 1 ? 'es' : ''}) RSS / CPU idle | ${mib(rssOf(k))} / ${cpuOf(k).toFixed(2)} % | |`);
    }
    if (caddy) console.log(`| ${caddyName} RSS | ${mib(pidsMatching(caddy.dir).reduce((a, p) => a + (procStat(p)?.rssKb ?? 0), 0))} | |`);
    console.log(`| time to create + deploy ${APPS} apps | ${deployedIn.toFixed(1)} s | |`);
    console.log(`| app containers running | ${running} | ${APPS} |`);
    if (MEM_BREAKDOWN) {
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 50 && !existsSync(memFile); i++) await sleep(100);
      const m = JSON.parse(readFileSync(memFile, 'utf8')) as Record<'before' | 'after', Record<string, number>>;
      const f = (o: Record<string, number>) => ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'].map((k) => `${k} ${(o[k] / 1048576).toFixed(1)}`).join(', ');
      console.log(`memoryUsage (MiB) before GC: ${f(m.before)}`);
      console.log(`memoryUsage (MiB) after full GC: ${f(m.after)}`);
      const after = procStat(pid);
      console.log(`VmRSS after GC: ${mib(after?.rssKb ?? NaN)}`);
      console.log(`resident by mapping (MiB): ${smapsBreakdown(pid)}`);
    }
  } finally {
    if (sampler) clearInterval(sampler);
    log('cleaning up');
    if (child && !exited) {
      const gone = new Promise<void>((r) => child!.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child!.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(t);
    }
    await removeInstance(INSTANCE, NETWORK).catch((err) => log(`removing containers failed: ${err}`));
    await stopHelpersOf(dataDir);
    await caddy?.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface Sample {
  phase: 'start' | 'deploying' | 'settling' | 'idle';
  daemonKb: number;
  caddyKb: number;
  /** dnsmasq, the guard scripts and anything else under the data dir's proxy/, Caddy apart. */
  helpersKb: number;
  /** All of svc's processes (Caddy only in host mode), counted four ways (footprint.ts). */
  all: Footprint;
}

const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

runMain(main);
