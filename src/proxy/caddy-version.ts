// Which Caddy svc drives, and what that version allows (docs/decisions/0044-caddy-2-11.md). Caddy's admin
// API does not say its version, so svc asks the binary of the process listening on the admin address
// (`<exe> version`): the host Caddy, the proxy container (host network: same sockets, its exe readable
// through /proc as root) or an operator's Caddy on this machine. A Caddy on another machine, or a process
// svc may not look into, is `unknown` and gets what the oldest supported Caddy (Debian's 2.6.2) needs.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Logger } from '../log.js';

const run = promisify(execFile);

/** What the config builder needs to know of the Caddy it loads into. */
export interface CaddyFeatures {
  /**
   * Caddy >= 2.11.2 resends a request body when it retries after a dial error (2.6.2 sends the already
   * closed body: `invalid Read on closed Body`, a 502 for a POST whose first pick had just died).
   */
  resendsBodies: boolean;
  /**
   * Caddy >= 2.7.0 takes reverse_proxy's `stream_close_delay`: a config load keeps the streams (upgraded
   * WebSockets) of the replaced handlers open that long instead of closing them at once (close 1001 within
   * 0.1 s, caddyserver/caddy#3143). 2.6.2 refuses the field, so it is never written for it.
   */
  streamCloseDelay: boolean;
  /** Caddy >= 2.7.0 takes reverse_proxy's `request_buffers` (2.6.2 calls it `buffer_requests`, and does not need it). */
  requestBuffers: boolean;
}

/** What svc assumes of a Caddy whose version it cannot tell: Debian bookworm's 2.6.2. */
export const OLDEST_FEATURES: CaddyFeatures = { resendsBodies: false, streamCloseDelay: false, requestBuffers: false };

/** Pure: `2.11.4` from `caddy version` output (`v2.11.4 h1:...`, Debian's `2.6.2`); undefined if none. */
export function parseCaddyVersion(out: string): string | undefined {
  return /v?(\d+\.\d+\.\d+)/.exec(out)?.[1];
}

/** Pure: what a version allows. */
export function featuresOf(version: string | undefined): CaddyFeatures {
  if (!version) return OLDEST_FEATURES;
  const [a, b, c] = version.split('.').map(Number);
  const atLeast = (x: number, y: number, z: number) => a > x || (a === x && (b > y || (b === y && c >= z)));
  return { resendsBodies: atLeast(2, 11, 2), streamCloseDelay: atLeast(2, 7, 0), requestBuffers: atLeast(2, 7, 0) };
}

/** Pure: the inodes of sockets listening on `port` in /proc/net/tcp{,6} text (state 0A). */
export function listeningInodes(procNetTcp: string, port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const line of procNetTcp.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A') out.push(f[9]);
  }
  return out;
}

/** The listening sockets' inodes on this port of this network namespace (cheap: two small files). */
function listeningSockets(port: number): string[] {
  let text = '';
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      text += readFileSync(f, 'utf8');
    } catch {
      /* no IPv6 */
    }
  }
  return listeningInodes(text, port).map((i) => `socket:[${i}]`);
}

/** The pid holding one of these sockets, if svc may see it (a walk of /proc/<pid>/fd: milliseconds). */
function pidHolding(sockets: string[]): number | undefined {
  const wanted = new Set(sockets);
  if (wanted.size === 0) return undefined;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${d}/fd`);
    } catch {
      continue; // not ours to read, or gone
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`/proc/${d}/fd/${fd}`))) return Number(d);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return undefined;
}

export interface DrivenCaddy {
  version: string | undefined;
  pid: number | undefined;
  features: CaddyFeatures;
}

const adminPort = (adminUrl: string): number | undefined => {
  const u = new URL(adminUrl);
  const local = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(u.hostname);
  return local ? Number(u.port || 80) : undefined;
};

/** The Caddy answering at this admin URL, when it runs on this machine. */
export async function drivenCaddy(adminUrl: string): Promise<DrivenCaddy> {
  const port = adminPort(adminUrl);
  const pid = port ? pidHolding(listeningSockets(port)) : undefined;
  let version: string | undefined;
  if (pid) {
    try {
      version = parseCaddyVersion((await run(`/proc/${pid}/exe`, ['version'], { timeout: 10_000 })).stdout);
    } catch {
      version = undefined;
    }
  }
  return { version, pid, features: featuresOf(version) };
}

export interface CaddyWatch {
  /** The features of the Caddy answering now (looked up when another socket listens on the admin port). */
  features(): Promise<CaddyFeatures>;
  /** The last features learnt (the oldest Caddy's before any look). */
  known(): CaddyFeatures;
}

/** A watch that always answers these features (tests, tools). */
export const fixedCaddyWatch = (features: CaddyFeatures): CaddyWatch => ({ features: async () => features, known: () => features });

/**
 * The adapters' view: the features of the Caddy now answering, asked again only when another socket
 * listens on the admin port (a restarted or replaced Caddy). Logs the Caddy svc drives when it first
 * learns it and on change.
 */
export function createCaddyWatch(adminUrl: string, log: Logger, look: (url: string) => Promise<DrivenCaddy> = drivenCaddy): CaddyWatch {
  let last: DrivenCaddy | undefined;
  let lastSockets = '';
  const port = adminPort(adminUrl);
  return {
    async features(): Promise<CaddyFeatures> {
      const sockets = port ? listeningSockets(port).join(',') : 'remote';
      if (last && sockets === lastSockets) return last.features;
      lastSockets = sockets;
      const now = await look(adminUrl);
      if (!last || last.pid !== now.pid || last.version !== now.version) {
        log.info('proxy caddy', {
          version: now.version ?? 'unknown',
          pid: now.pid,
          admin: adminUrl,
          ...(now.version ? {} : { assumed: "Caddy 2.6.2's limits (a Caddy not on this machine, or not found)" }),
          resendsBodies: now.features.resendsBodies,
          streamCloseDelay: now.features.streamCloseDelay,
          requestBuffers: now.features.requestBuffers,
        });
      }
      last = now;
      return now.features;
    },
    known: (): CaddyFeatures => last?.features ?? OLDEST_FEATURES,
  };
}
