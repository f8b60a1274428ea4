// Makes sure a Docker engine answers before the integration suites run: starts Debian's `dockerd`
// (installing docker.io when missing) if none is up, and stops at teardown only what it started.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';

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

export async function setup() {
  if (engineUp()) return;
  if (!existsSync('/usr/sbin/dockerd')) {
    execFileSync('bash', ['scripts/install-host-packages.sh'], { stdio: 'inherit' });
  }
  const out = openSync('/tmp/svc-test-dockerd.log', 'a');
  started = spawn('/usr/sbin/dockerd', [], { stdio: ['ignore', out, out], detached: true });
  started.unref();
  await waitFor(engineUp, 60_000, 'dockerd to answer');
}

export async function teardown() {
  if (!started?.pid) return;
  process.kill(started.pid, 'SIGTERM');
  await waitFor(() => !engineUp(), 30_000, 'dockerd to stop').catch(() => {});
}
