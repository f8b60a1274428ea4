// A real host Caddy for integration tests and the benchmarks: started with a minimal config whose admin
// API listens on a free loopback port, its data and config dirs in a temp dir, killed (and the dir
// removed) in teardown. Which Caddy: SVC_TEST_CADDY, a path (`/usr/bin/caddy`: Debian bookworm's 2.6.2,
// the host-mode pass of scripts/test.sh), or unset: Caddy 2.11 from Debian unstable (caddy-unstable.ts).
// Also free-port helpers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminFetch } from './admin-fetch.js';
import { unstableCaddyBin } from './caddy-unstable.js';
import { waitFor } from './wait.js';

/** The Caddy binary the tests run (see the top of this file); fetched on first use when it is unstable's. */
export const caddyBin = (): string => process.env.SVC_TEST_CADDY || unstableCaddyBin();

/** A TCP port free on 127.0.0.1 now (and, checked too, free for UDP). */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    if (await udpFree(port)) return port;
  }
  throw new Error('no free port found');
}

async function udpFree(port: number): Promise<boolean> {
  const s = createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export interface TestCaddy {
  adminUrl: string;
  dir: string;
  /** The `caddy run` process (benchmarks read its CPU time from /proc). */
  pid: number;
  /** Caddy's stdout+stderr so far, last 2 MB (for failure messages and the benchmarks' error counts). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `caddy run` and waits until its admin API answers; kill it with stop(). */
export async function startCaddy(): Promise<TestCaddy> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-caddy-'));
  const adminPort = await freePort();
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const config = join(dir, 'bootstrap.json');
  await writeFile(config, JSON.stringify({ admin: { listen: `127.0.0.1:${adminPort}` } }));
  let out = '';
  const child: ChildProcess = spawn(caddyBin(), ['run', '--config', config], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-2_000_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exit;
      clearTimeout(t);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`caddy exited: ${out}`);
        const res = await adminFetch(`${adminUrl}/config/`);
        return res.ok;
      },
      { timeoutMs: 10_000, what: 'caddy admin API' },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { adminUrl, dir, pid: child.pid!, output: () => out, stop };
}
