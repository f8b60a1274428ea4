// Pure: how svc runs Debian's dnsmasq as the DNS responder the proxy resolves apps through
// (notes/zero-downtime-switch.md, design D): answers `<app>.svc.internal` A queries from one hosts file per
// app, NODATA for AAAA, NXDOMAIN for unknown names, REFUSED for everything outside svc.internal (no
// upstream servers), only on 127.0.0.1:port. Its files live under `<SVC_DATA_DIR>/proxy/`.
import { join } from 'node:path';
import { PROBE_NAME } from './query.js';

export interface DnsmasqPaths {
  /** `--hostsdir`: one file per app, re-read by dnsmasq when replaced (hosts.ts writes it). */
  hostsDir: string;
  pidFile: string;
  logFile: string;
  /** The records file of the Node responder svc used before dnsmasq; its responder is taken over. */
  legacyStateFile: string;
}

export function dnsmasqPaths(dataDir: string): DnsmasqPaths {
  const dir = join(dataDir, 'proxy');
  return {
    hostsDir: join(dir, 'dns'),
    pidFile: join(dir, 'dnsmasq.pid'),
    logFile: join(dir, 'dnsmasq.log'),
    legacyStateFile: join(dir, 'dns-records.json'),
  };
}

/** The argument that identifies the dnsmasq of a hosts directory in /proc (exact match). */
export const hostsDirArg = (hostsDir: string) => `--hostsdir=${hostsDir}`;

/**
 * Pure: the identity TXT text of a hosts directory. Hex, because dnsmasq splits TXT text at commas and
 * keeps quotes, so a path could not come back intact; chunks stay under the 255-byte string limit.
 */
export function identityText(hostsDir: string): string {
  const hex = Buffer.from(hostsDir, 'utf8').toString('hex');
  return hex.match(/.{1,250}/g)!.join(',');
}

/**
 * Pure: what a probe's TXT says is served there: a hosts directory (dnsmasq, hex) or the records file of
 * the earlier Node responder (a plain absolute path). Undefined when the text is neither.
 */
export function servedPath(txt: string | undefined): string | undefined {
  if (txt === undefined) return undefined;
  if (txt.startsWith('/')) return txt;
  if (/^([0-9a-f]{2})+$/.test(txt)) return Buffer.from(txt, 'hex').toString('utf8');
  return undefined;
}

/**
 * Pure: dnsmasq's arguments. In the foreground (the guard script is its parent and detaches), no config
 * file, no /etc/hosts or resolv.conf, no cache (hosts entries are always answered), logging to stderr
 * (the guard's log file). `--user` is svc's own user: dnsmasq drops root to `nobody` by default, which
 * cannot read hosts files under a data directory of mode 700; it needs no privilege for a port above 1023.
 */
export function dnsmasqArgs(paths: DnsmasqPaths, port: number, user: string): string[] {
  return [
    '--conf-file=/dev/null',
    '--keep-in-foreground',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--no-resolv',
    '--no-hosts',
    '--local=/svc.internal/',
    '--cache-size=0',
    hostsDirArg(paths.hostsDir),
    `--txt-record=${PROBE_NAME.replace(/\.$/, '')},${identityText(paths.hostsDir)}`,
    `--pid-file=${paths.pidFile}`,
    `--user=${user}`,
    '--log-facility=-',
  ];
}
