// Makes sure a Docker engine answers before the integration suites run: starts Debian's `dockerd`
// (installing docker.io when missing) if none is up, and stops at teardown only what it started. Fetches
// the tests' Caddy 2.11 once here (caddy-unstable.ts) so the files do not each race for it, and says which
// Caddy the host-side tests run (SVC_TEST_CADDY).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { caddyBin } from './caddy.js';
import { caddyVersionOf, unstableCaddyBin } from './caddy-unstable.js';

const engineUp = () => {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
};

async function waitFor(cond: () => boolean, timeoutMs: number, what: string) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let started: ChildProcess | undefined;

/** Starts Debian's dockerd when no engine answers; the pid of the one it started, if it did. */
export async function ensureEngine(): Promise<number | undefined> {
  if (engineUp()) return undefined;
  if (!existsSync('/usr/sbin/dockerd')) {
    execFileSync('bash', ['scripts/install-host-packages.sh'], { stdio: 'inherit' });
  }
  const out = openSync('/tmp/svc-test-dockerd.log', 'a');
  started = spawn('/usr/sbin/dockerd', [], { stdio: ['ignore', out, out], detached: true });
  started.unref();
  await waitFor(engineUp, 60_000, 'dockerd to answer');
  return started.pid;
}

export async function setup() {
  unstableCaddyBin();
  console.log(`integration tests: host Caddy ${caddyBin()} (${caddyVersionOf(caddyBin())}); image svc-test/caddy:2 from Caddy ${caddyVersionOf(unstableCaddyBin())}`);
  await ensureEngine();
}

export async function teardown() {
  if (!started?.pid) return;
  process.kill(started.pid, 'SIGTERM');
  await waitFor(() => !engineUp(), 30_000, 'dockerd to stop').catch(() => {});
}
