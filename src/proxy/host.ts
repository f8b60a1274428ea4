// SVC_PROXY_MODE=host (and auto without a proxy image): svc runs the host's Caddy (Debian's `caddy`)
// itself, detached under the guard script like dnsmasq, so it outlives the daemon and stops when the data
// directory is deleted. Same layout as the container: `<data>/proxy/data` (certificates) and
// `<data>/proxy/config` (bootstrap and Caddy's autosave), so `run --resume` serves the last routes at once
// after a restart, and a backup of `proxy/` holds the certificates either way.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { adminListen } from './config.js';
import { createTerminator, livePidFromFile, pidsWithArg, processArgs, spawnGuarded, type Terminator } from './detached.js';

export const CADDY_BIN = '/usr/bin/caddy';

export interface HostCaddyPaths {
  dataDir: string;
  configDir: string;
  /** `--config`: its exact path in Caddy's arguments identifies this data directory's Caddy. */
  bootstrap: string;
  pidFile: string;
  logFile: string;
}

export function hostCaddyPaths(svcDataDir: string): HostCaddyPaths {
  const dir = join(resolve(svcDataDir), 'proxy');
  return {
    dataDir: join(dir, 'data'),
    configDir: join(dir, 'config'),
    bootstrap: join(dir, 'config', 'bootstrap.json'),
    pidFile: join(dir, 'caddy.pid'),
    logFile: join(dir, 'caddy.log'),
  };
}

/** Pure: Caddy's arguments. */
export const hostCaddyArgs = (p: HostCaddyPaths) => ['run', '--resume', '--config', p.bootstrap, '--pidfile', p.pidFile];

/** The pid of this data directory's host Caddy when it runs. */
export const hostCaddyPid = (svcDataDir: string) => {
  const p = hostCaddyPaths(svcDataDir);
  return livePidFromFile(p.pidFile, p.bootstrap);
};

export interface HostCaddyOptions {
  svcDataDir: string;
  adminUrl: string;
  log: Logger;
  /** One look: true when the admin API answers now (CaddyProxy.answers). */
  answers: () => Promise<boolean>;
  bin?: string;
  /** Stops a stale svc's Caddy across passes without waiting (default: a new one). */
  terminator?: Terminator;
}

/** `running`: this data directory's Caddy runs; `started`: started now, its admin API not asked yet; `stopping`: a stale one is being stopped. */
export type HostCaddyState = 'running' | 'started' | 'stopping';

/**
 * Makes sure this data directory's Caddy runs, never waiting for it: the caller applies the routes once
 * its admin API answers. A Caddy of an svc whose data directory is gone holding the admin address is
 * stopped and replaced; any other Caddy answering there is a conflict, with an error naming it.
 */
export async function ensureHostCaddy(o: HostCaddyOptions): Promise<HostCaddyState> {
  const p = hostCaddyPaths(o.svcDataDir);
  if (livePidFromFile(p.pidFile, p.bootstrap)) return 'running';
  if (await o.answers()) {
    if (pidsWithArg(p.bootstrap).length > 0) return 'running'; // ours, its pid file lost
    const stale = staleSvcCaddies();
    if (stale.length === 0) {
      throw new Error(
        `the proxy admin address ${adminListen(o.adminUrl)} (SVC_PROXY_ADMIN_URL) is answered by a Caddy this data directory did not start; ` +
          `stop it, or set SVC_PROXY_MODE=external to use it, or pick another SVC_PROXY_ADMIN_URL`,
      );
    }
    o.log.info('stopping the host Caddy of a deleted svc data directory', { pids: stale });
    if (!(o.terminator ?? createTerminator()).done(stale)) return 'stopping';
  }
  const bin = o.bin ?? CADDY_BIN;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: install Debian's caddy (scripts/install-host-packages.sh --daemon does)`);
  await mkdir(p.dataDir, { recursive: true, mode: 0o700 });
  await mkdir(p.configDir, { recursive: true, mode: 0o700 });
  await writeFile(p.bootstrap, JSON.stringify({ admin: { listen: adminListen(o.adminUrl) } }) + '\n', { mode: 0o600 });
  const child = spawnGuarded({
    guardDir: p.configDir,
    command: bin,
    args: hostCaddyArgs(p),
    logFile: p.logFile,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dirname(p.configDir), XDG_DATA_HOME: p.dataDir, XDG_CONFIG_HOME: p.configDir },
  });
  o.log.info('host caddy started', { pid: child.pid, admin: adminListen(o.adminUrl), logFile: p.logFile });
  return 'started';
}

/** The last lines of this data directory's host Caddy log, for an error that says why it does not answer. */
export function hostCaddyLogTail(svcDataDir: string): string {
  const { logFile } = hostCaddyPaths(svcDataDir);
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-6).join('\n') : '';
  return `last lines of ${logFile}:\n${tail}`;
}

/** Caddy processes started by some svc (a `--config <dir>/proxy/config/bootstrap.json`) whose directory is gone. */
function staleSvcCaddies(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const args = processArgs(Number(d));
    const i = args?.indexOf('--config') ?? -1;
    const config = i >= 0 ? args![i + 1] : undefined;
    if (config?.endsWith('/proxy/config/bootstrap.json') && !existsSync(dirname(config))) out.push(Number(d));
  }
  return out;
}
