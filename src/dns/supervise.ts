// The daemon keeps a dnsmasq answering on 127.0.0.1:SVC_DNS_PORT for its data directory. Cheap when it
// runs (a pid file and /proc, no query), so the proxy reconciler checks it every pass and a killed
// responder is back within one probe interval. A responder left by an svc whose data directory is gone,
// or by the Node responder of an earlier svc version, is taken over; only a live responder of another
// existing data directory, or a DNS server that is not svc's, is a conflict, with an error naming it.
// Nothing here sleeps: a responder that is starting, or a stale one that is stopping, is reported as
// `starting` and the reconciler comes back shortly (DESIGN.md rule 3).
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Logger } from '../log.js';
import { livePidFromFile, pidsWithArg, spawnGuarded, createTerminator } from '../proxy/detached.js';
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

/** `running`: this data directory's responder answers; `starting`: ask again shortly. */
export type ResponderState = 'running' | 'starting';

/** The pid of this data directory's running dnsmasq, from its pid file; undefined when none runs. */
export function dnsResponderPid(dataDir: string): number | undefined {
  const p = dnsmasqPaths(resolve(dataDir));
  return livePidFromFile(p.pidFile, hostsDirArg(p.hostsDir));
}

/** Who answers on the port: nobody, our responder, a stale svc responder (to take over), or a conflict. */
type Holder = { kind: 'free' } | { kind: 'ours' } | { kind: 'stale'; served: string; pids: number[]; legacy: boolean } | { kind: 'conflict'; message: string };

async function portHolder(dataDir: string, port: number): Promise<Holder> {
  const paths = dnsmasqPaths(resolve(dataDir));
  let probe = await probeDnsResponder(port);
  if (!probe.answered) probe = await probeDnsResponder(port, 500); // one retry: UDP may drop
  if (!probe.answered) return { kind: 'free' };
  const served = servedPath(probe.served);
  if (served === paths.hostsDir) return { kind: 'ours' }; // its pid file lost: it still serves
  if (served === undefined) return { kind: 'conflict', message: `SVC_DNS_PORT ${port}: a DNS server that is not svc's answers on 127.0.0.1; stop it or pick another SVC_DNS_PORT` };
  const pids = [...new Set([...pidsWithArg(hostsDirArg(served)), ...pidsWithArg(served)])];
  const legacy = served === paths.legacyStateFile;
  if (!legacy && existsSync(served)) {
    return {
      kind: 'conflict',
      message:
        `SVC_DNS_PORT ${port} is used by the DNS responder of another svc instance (serving ${served}` +
        `${pids.length ? `, pid ${pids.join(', ')}` : ''}); stop that instance or delete its data directory, or pick another SVC_DNS_PORT`,
    };
  }
  if (pids.length === 0) return { kind: 'conflict', message: `SVC_DNS_PORT ${port}: a stale svc responder (serving ${served}) answers but its process cannot be found; stop it` };
  return { kind: 'stale', served, pids, legacy };
}

/**
 * At daemon start, before anything is served: throws (one line naming SVC_DNS_PORT) when the port is held
 * by a live responder of another instance or by a DNS server that is not svc's. Without it the daemon
 * would deploy `success` while the proxy resolves its apps through someone else's answers.
 */
export async function checkDnsPort(dataDir: string, port: number): Promise<void> {
  if (dnsResponderPid(dataDir)) return;
  const holder = await portHolder(dataDir, port);
  if (holder.kind === 'conflict') throw new Error(holder.message);
}

export interface DnsSupervisor {
  /** Never waits on the responder: starts or takes over what is needed and says whether it answers yet. */
  ensure(): Promise<ResponderState>;
}

export function createDnsSupervisor(opts: EnsureResponderOptions): DnsSupervisor {
  const paths = dnsmasqPaths(resolve(opts.dataDir));
  const terminator = createTerminator();
  let starting: { exited: () => boolean; pid?: number; until: number } | undefined;

  const failed = (why: string) => {
    starting = undefined;
    const tail = existsSync(paths.logFile) ? readFileSync(paths.logFile, 'utf8').trimEnd().split('\n').slice(-6).join('\n') : '';
    return new Error(`the DNS responder (dnsmasq) ${why} on 127.0.0.1:${opts.port}; last lines of ${paths.logFile}:\n${tail}`);
  };

  return {
    async ensure() {
      if (livePidFromFile(paths.pidFile, hostsDirArg(paths.hostsDir))) {
        starting = undefined;
        return 'running';
      }
      if (starting) {
        const p = await probeDnsResponder(opts.port, 200);
        if (p.answered && servedPath(p.served) === paths.hostsDir) {
          starting = undefined;
          return 'running';
        }
        if (starting.exited()) throw failed('exited at once');
        if (Date.now() > starting.until) throw failed('did not answer');
        return 'starting';
      }
      const holder = await portHolder(opts.dataDir, opts.port);
      if (holder.kind === 'ours') return 'running';
      if (holder.kind === 'conflict') throw new Error(holder.message);
      if (holder.kind === 'stale') {
        opts.log.info('taking over the DNS port from a stale responder', { port: opts.port, served: holder.served, pids: holder.pids, reason: holder.legacy ? 'earlier svc version' : 'its data directory is gone' });
        if (!terminator.done(holder.pids)) return 'starting';
      }
      const bin = opts.bin ?? DNSMASQ_BIN;
      if (!existsSync(bin)) throw new Error(`${bin} is missing: install Debian's dnsmasq-base (scripts/install-host-packages.sh --daemon does)`);
      await mkdir(paths.hostsDir, { recursive: true, mode: 0o700 });
      await rm(paths.legacyStateFile, { force: true });
      const child = spawnGuarded({ guardDir: paths.hostsDir, command: bin, args: dnsmasqArgs(paths, opts.port, userInfo().username), logFile: paths.logFile });
      opts.log.info('dns responder started', { pid: child.pid, port: opts.port, hostsDir: paths.hostsDir, logFile: paths.logFile });
      starting = { exited: child.exited, pid: child.pid, until: Date.now() + (opts.startTimeoutMs ?? 5000) };
      return 'starting';
    },
  };
}

export type EnsureResult = { started: boolean; pid?: number };

/**
 * For tests, benchmarks and tools (never a reconciler): the supervisor driven until its responder answers.
 * `started` says whether this call started one.
 */
export async function ensureDnsResponder(opts: EnsureResponderOptions): Promise<EnsureResult> {
  const supervisor = createDnsSupervisor(opts);
  let started = false;
  for (;;) {
    const before = dnsResponderPid(opts.dataDir);
    if ((await supervisor.ensure()) === 'running') return { started, pid: before ?? dnsResponderPid(opts.dataDir) };
    started = true;
    await new Promise((r) => setTimeout(r, 25));
  }
}
