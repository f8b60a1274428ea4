// The daemon keeps a dnsmasq answering on 127.0.0.1:SVC_DNS_PORT for its data directory. Cheap when it
// runs (a pid file and /proc, no query), so the proxy reconciler checks it every pass and a killed
// responder is back within one probe interval. A responder left by an svc whose data directory is gone,
// or by the Node responder of an earlier svc version, is taken over; only a live responder of another
// existing data directory, or a DNS server that is not svc's, is a conflict, with an error naming it.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Logger } from '../log.js';
import { livePidFromFile, pidsWithArg, spawnGuarded, stopPids } from '../proxy/detached.js';
import { dnsmasqArgs, dnsmasqPaths, hostsDirArg, servedPath } from './dnsmasq.js';
import { probeDnsResponder } from './query.js';

export const DNSMASQ_BIN = '/usr/sbin/dnsmasq';

export interface EnsureResponderOptions {
  dataDir: string;
  port: number;
  log: Logger;
  /** How long a started responder may take to answer (default 5 s). */
  startTimeoutMs?: number;
  /** Default /usr/sbin/dnsmasq (Debian's dnsmasq-base). */
  bin?: string;
}

export type EnsureResult = { started: boolean; pid?: number };

/** The pid of this data directory's running dnsmasq, from its pid file; undefined when none runs. */
export function dnsResponderPid(dataDir: string): number | undefined {
  const p = dnsmasqPaths(resolve(dataDir));
  return livePidFromFile(p.pidFile, hostsDirArg(p.hostsDir));
}

/**
 * Makes sure this data directory's dnsmasq answers on 127.0.0.1:port, starting it detached when it does
 * not. Throws on a conflict (see above) or when the started one does not answer in time (with its log).
 */
export async function ensureDnsResponder(opts: EnsureResponderOptions): Promise<EnsureResult> {
  const paths = dnsmasqPaths(resolve(opts.dataDir));
  const running = livePidFromFile(paths.pidFile, hostsDirArg(paths.hostsDir));
  if (running) return { started: false, pid: running };

  let probe = await probeDnsResponder(opts.port);
  if (!probe.answered) probe = await probeDnsResponder(opts.port, 500); // one retry: UDP may drop
  if (probe.answered) {
    const served = servedPath(probe.served);
    if (served === paths.hostsDir) return { started: false }; // ours, its pid file lost: it still serves
    if (served === undefined) {
      throw new Error(`SVC_DNS_PORT ${opts.port}: a DNS server that is not svc's answers on 127.0.0.1; stop it or pick another SVC_DNS_PORT`);
    }
    const pids = [...new Set([...pidsWithArg(hostsDirArg(served)), ...pidsWithArg(served)])];
    if (served !== paths.legacyStateFile && existsSync(served)) {
      throw new Error(
        `SVC_DNS_PORT ${opts.port} is used by the DNS responder of another svc instance (serving ${served}` +
          `${pids.length ? `, pid ${pids.join(', ')}` : ''}); stop that instance or delete its data directory, or pick another SVC_DNS_PORT`,
      );
    }
    if (pids.length === 0) throw new Error(`SVC_DNS_PORT ${opts.port}: a stale svc responder (serving ${served}) answers but its process cannot be found; stop it`);
    opts.log.info('taking over the DNS port from a stale responder', { port: opts.port, served, pids, reason: served === paths.legacyStateFile ? 'earlier svc version' : 'its data directory is gone' });
    await stopPids(pids);
  }
  return startResponder(opts, paths);
}

async function startResponder(opts: EnsureResponderOptions, paths: ReturnType<typeof dnsmasqPaths>): Promise<EnsureResult> {
  const bin = opts.bin ?? DNSMASQ_BIN;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: install Debian's dnsmasq-base (scripts/install-host-packages.sh --daemon does)`);
  await mkdir(paths.hostsDir, { recursive: true, mode: 0o700 });
  await rm(paths.legacyStateFile, { force: true });
  const args = dnsmasqArgs(paths, opts.port, userInfo().username);
  const child = spawnGuarded({ guardDir: paths.hostsDir, command: bin, args, logFile: paths.logFile });
  opts.log.info('dns responder started', { pid: child.pid, port: opts.port, hostsDir: paths.hostsDir, logFile: paths.logFile });
  const end = Date.now() + (opts.startTimeoutMs ?? 5000);
  while (Date.now() < end) {
    const p = await probeDnsResponder(opts.port, 200);
    if (p.answered && servedPath(p.served) === paths.hostsDir) return { started: true, pid: child.pid };
    if (child.exited()) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const tail = existsSync(paths.logFile) ? readFileSync(paths.logFile, 'utf8').trimEnd().split('\n').slice(-6).join('\n') : '';
  throw new Error(`the DNS responder (dnsmasq) did not answer on 127.0.0.1:${opts.port}; last lines of ${paths.logFile}:\n${tail}`);
}
