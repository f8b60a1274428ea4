// Detached helper processes of the data plane (dnsmasq, the host Caddy): started in their own process
// group under scripts/helper-guard.sh so they outlive the daemon (restarts, upgrades, crashes) and stop by
// themselves when the directory they serve is deleted. Found again by pid file or by an argument that
// names their data directory, and checked against /proc so a reused pid is never taken for them.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root (where package.json is), from this module's location in src/ or dist/. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dir !== dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

export interface GuardedSpawn {
  /** The helper stops when this directory no longer exists. */
  guardDir: string;
  command: string;
  args: string[];
  /** stdout and stderr of the helper (appended, mode 600). */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Starts `command args` detached (own session, no stdio tie to the daemon, unref'd) under the guard
 * script. Returns the guard's pid and whether it has already ended (a helper that failed at once).
 */
export function spawnGuarded(o: GuardedSpawn): { pid: number | undefined; exited: () => boolean } {
  mkdirSync(dirname(o.logFile), { recursive: true });
  const fd = openSync(o.logFile, 'a', 0o600);
  let exited = false;
  try {
    const guard = join(projectRoot(), 'scripts', 'helper-guard.sh');
    const child = spawn('/bin/sh', [guard, o.guardDir, o.command, ...o.args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: o.cwd ?? o.guardDir,
      env: o.env ?? process.env,
    });
    child.on('error', () => (exited = true));
    child.on('exit', () => (exited = true));
    child.unref();
    return { pid: child.pid, exited: () => exited };
  } finally {
    closeSync(fd);
  }
}

/** The arguments of a running process, or undefined when it is gone or a zombie. */
export function processArgs(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return undefined;
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args.at(-1) === '') args.pop();
    return args;
  } catch {
    return undefined;
  }
}

/** The pid in `pidFile` when that process runs and one of its arguments is exactly `arg`. */
export function livePidFromFile(pidFile: string, arg: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 1) return undefined;
  return processArgs(pid)?.includes(arg) ? pid : undefined;
}

/** Pids of running processes (not this one) with an argument exactly `arg`; scans /proc, so only on a slow path. */
export function pidsWithArg(arg: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    if (processArgs(Number(d))?.includes(arg)) out.push(Number(d));
  }
  return out;
}

export interface Terminator {
  /**
   * One look, no wait: SIGTERM to pids not signalled yet, SIGKILL to those signalled more than `graceMs`
   * ago; true when none of them runs any more. A reconciler calls it on each pass until it says true.
   */
  done(pids: number[]): boolean;
}

export function createTerminator(graceMs = 3000, now: () => number = Date.now): Terminator {
  const since = new Map<number, number>();
  return {
    done(pids) {
      const left = pids.filter((p) => processArgs(p));
      for (const pid of left) {
        const t = since.get(pid);
        if (t === undefined) since.set(pid, now());
        signal(pid, t !== undefined && now() - t > graceMs ? 'SIGKILL' : 'SIGTERM');
      }
      for (const pid of [...since.keys()]) if (!left.includes(pid)) since.delete(pid);
      return left.length === 0;
    },
  };
}

const signal = (pid: number, s: NodeJS.Signals) => {
  try {
    process.kill(pid, s);
  } catch {
    /* already gone */
  }
};

/** For tools and tests (it waits): SIGTERM to each pid, then SIGKILL to those still running after `graceMs`; resolves when all are gone. */
export async function stopPids(pids: number[], graceMs = 3000): Promise<void> {
  for (const pid of pids) signal(pid, 'SIGTERM');
  const end = Date.now() + graceMs;
  let left = pids.filter((p) => processArgs(p));
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 25));
    left = left.filter((p) => processArgs(p));
  }
  for (const pid of left) signal(pid, 'SIGKILL');
}

/**
 * Stops every helper process of a data directory (any argument mentions `<dataDir>/proxy`): for tests,
 * benchmarks and tools that delete a data directory and must not wait for the guards to notice.
 */
export async function stopHelpersOf(dataDir: string): Promise<void> {
  const needle = join(dataDir, 'proxy');
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    if (processArgs(Number(d))?.some((a) => a.includes(needle))) pids.push(Number(d));
  }
  await stopPids(pids);
}
