// A whole svc daemon as its own process (`node --import tsx src/cli.ts serve`), for tests that must see
// the process itself: that it stays alive whatever a request sends, that it starts again on a database a
// crash left behind, or two daemons side by side. Same isolation as test/support/daemon.ts (temp data dir,
// free ports, an external host Caddy, its own network); `close()` stops the process and removes every
// container of its instance, its network, its detached helpers (by pid), Caddy and the temp dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { startCaddy, type TestCaddy } from './caddy.js';
import { isolatedDaemonEnv, removeInstance } from './daemon.js';
import { waitFor } from './wait.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface DaemonProcess {
  url: string;
  dataDir: string;
  /** The network given as SVC_NETWORK (without it the daemon uses its instance's name). */
  network: string;
  /** The environment the process runs with (SVC_PORT, SVC_DNS_PORT, ...). */
  env: Record<string, string>;
  /** The bearer token of the admin user the helper set up. */
  token(): string;
  /** The `svc.instance` the daemon reported at its last start (generated or SVC_INSTANCE). */
  instance(): string | undefined;
  /** JSON request with the bearer token; returns status, parsed body (or text) and the content type. */
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T; type: string }>;
  /** True while the process runs. */
  alive(): boolean;
  /** Everything the process printed (all starts), for assertions and failure messages. */
  output(): string;
  /** SIGTERM and wait for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL, as a crash or the OOM killer would: nothing of the daemon's own shutdown runs. */
  kill(): Promise<void>;
  /** Starts the process again on the same data dir and environment. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a daemon process. `env` overrides the isolated defaults; a key set to '' is removed (e.g.
 * `{ SVC_INSTANCE: '' }` for a daemon that picks its own identity).
 */
export async function startDaemonProcess(name: string, env: Record<string, string> = {}): Promise<DaemonProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), `svc-test-${name}-`));
  const network = `svc-test-${name}-${process.pid}`;
  const caddy: TestCaddy = await startCaddy();
  const vars: Record<string, string> = {
    ...(await isolatedDaemonEnv({ dataDir, caddyAdminUrl: caddy.adminUrl, network, instance: `test-${name}-${process.pid}` })),
    SVC_LOG_LEVEL: 'info',
    ...env,
  };
  for (const [k, v] of Object.entries(vars)) if (v === '') delete vars[k];
  const url = `http://127.0.0.1:${vars.SVC_PORT}`;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  let child: ChildProcess | undefined;
  let exited = true;
  let out = '';
  let instance: string | undefined;
  let token = '';

  const raw = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    return { status: res.status, body: type.includes('json') && text ? JSON.parse(text) : text, type, headers: res.headers };
  };

  const start = async () => {
    if (!exited) throw new Error('already running');
    const { PATH, HOME } = process.env;
    child = spawn(process.execPath, ['--import', tsx, join(ROOT, 'src/cli.ts'), 'serve'], {
      cwd: dataDir,
      env: { PATH: PATH ?? '/usr/bin:/bin', HOME: HOME ?? dataDir, ...vars },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = false;
    const keep = (b: Buffer) => {
      out = (out + b.toString()).slice(-200_000);
      const m = /"msg":"svc listening"[^\n]*"instance":"([^"]+)"/.exec(b.toString());
      if (m) instance = m[1];
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', () => (exited = true));
    await waitFor(
      async () => {
        if (exited) throw new Error(`daemon exited: ${out.slice(-3000)}`);
        return (await fetch(`${url}/healthz`).catch(() => undefined))?.ok;
      },
      { timeoutMs: 30_000, what: `daemon ${name} to listen` },
    );
  };

  const stop = async () => {
    if (exited || !child) return;
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    const kill = setTimeout(() => child?.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(kill);
  };

  const kill = async () => {
    if (exited || !child) return;
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };

  try {
    await start();
    const setup = await raw('POST', '/api/auth/setup', { username: 'admin', password: 'correct horse battery' });
    const cookie = setup.headers.get('set-cookie')?.split(';')[0] ?? '';
    const tok = await raw('POST', '/api/tokens', { name: 'tests' }, { cookie });
    if (tok.status !== 201) throw new Error(`token creation failed: ${tok.status} ${JSON.stringify(tok.body)}`);
    token = (tok.body as { token: string }).token;
  } catch (err) {
    await stop();
    await caddy.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    dataDir,
    network,
    env: vars,
    token: () => token,
    instance: () => instance,
    api: async (method, path, body, headers = {}) => {
      const r = await raw(method, path, body, { authorization: `Bearer ${token}`, ...headers });
      return { status: r.status, body: r.body as any, type: r.type };
    },
    alive: () => !exited,
    output: () => out,
    stop,
    kill,
    start,
    async close() {
      await stop();
      // Without SVC_NETWORK the daemon's network is named after its instance.
      if (instance) await removeInstance(instance, vars.SVC_NETWORK ?? instance).catch(() => {});
      await stopHelpersOf(dataDir).catch(() => {});
      await caddy.stop().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
