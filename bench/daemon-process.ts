// The daemon as a user runs it, for the benches that measure from outside (issue 36): `node <npm start's
// flags> dist/cli.js serve` as its own process with npm start's environment (MALLOC_ARENA_MAX=2), its own
// data dir, network, instance label and loopback ports, behind a Caddy the bench starts (external proxy
// mode, as startTestDaemon). The client's polling then does not share the daemon's event loop, and the
// daemon runs with V8's compilers off as in production, which an in-process daemon under tsx does not.
//
// With `trace: true` a preload subscribes to the daemon's trace channel (src/trace.ts) and appends each
// mark as a JSON line to a file in the data dir, read back by `marks()` (diagnosis: a subscriber makes the
// marks cost their publish). dist/ is rebuilt first when older than src/ (scripts/build-if-stale.mjs).
//
// `close()` stops the daemon, removes every container of its instance and its network, stops its helpers
// (the DNS responder) and Caddy, and removes the data dir.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { TRACE_CHANNEL, type TraceMark } from '../src/trace.js';
import { startCaddy, type TestCaddy } from '../test/support/caddy.js';
import { isolatedDaemonEnv, removeInstance } from '../test/support/daemon.js';
import { benchToken, rawApi, sleep, startEnv, startFlags } from './common.js';

export interface DaemonProcess {
  url: string;
  token: string;
  pid: number;
  network: string;
  instance: string;
  dataDir: string;
  caddy: TestCaddy;
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** The trace marks written so far (empty without `trace`). */
  marks(): TraceMark[];
  close(): Promise<void>;
}

/** Runs scripts/build-if-stale.mjs: dist/ rebuilt only when src/ changed since. */
export function buildIfStale(): void {
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'ignore' });
}

export async function startDaemonProcess(name: string, opts: { trace?: boolean; env?: Record<string, string> } = {}): Promise<DaemonProcess> {
  buildIfStale();
  const dataDir = await mkdtemp(join(tmpdir(), `svc-bench-${name}-`));
  const instance = `bench-${name}-${process.pid}`;
  const network = `svc-bench-${name}-${process.pid}`;
  const caddy = await startCaddy();
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([gone, sleep(15_000)]);
    }
    await removeInstance(instance, network).catch(() => {});
    await stopHelpersOf(dataDir).catch(() => {});
    await caddy.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    mkdirSync(join(dataDir, 'manifests'));
    const isolated = await isolatedDaemonEnv({ dataDir, caddyAdminUrl: caddy.adminUrl, network, instance });
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dataDir, ...isolated, SVC_LOG_LEVEL: 'warn', ...startEnv(), ...opts.env };
    const nodeArgs = [...startFlags()];
    const traceFile = join(dataDir, 'trace.jsonl');
    if (opts.trace) {
      const preload = join(dataDir, 'trace-preload.mjs');
      writeFileSync(
        preload,
        `import { subscribe } from 'node:diagnostics_channel';\nimport { appendFileSync } from 'node:fs';\n` +
          `subscribe(${JSON.stringify(TRACE_CHANNEL)}, (m) => appendFileSync(${JSON.stringify(traceFile)}, JSON.stringify(m) + '\\n'));\n`,
      );
      nodeArgs.push('--import', preload);
    }
    let out = '';
    child = spawn(process.execPath, [...nodeArgs, resolve('dist/cli.js'), 'serve'], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => void (out = (out + b.toString()).slice(-20_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const url = `http://127.0.0.1:${env.SVC_PORT}`;
    const end = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`daemon exited: ${out}`);
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > end) throw new Error(`daemon did not answer within 30 s: ${out}`);
      await sleep(50);
    }
    const raw = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => rawApi(url, method, path, body, headers);
    const token = await benchToken(url);
    return {
      url,
      token,
      pid: child.pid!,
      network,
      instance,
      dataDir,
      caddy,
      api: async (method, path, body) => {
        const r = await raw(method, path, body, { authorization: `Bearer ${token}` });
        return { status: r.status, body: r.body };
      },
      marks: () => (existsSync(traceFile) ? readFileSync(traceFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as TraceMark) : []),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
