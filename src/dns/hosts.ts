// The records dnsmasq answers: one hosts file per app in its `--hostsdir`, which dnsmasq re-reads by
// itself (inotify) when a file is replaced or removed. Each file is written to a dot-file first (dnsmasq
// ignores names starting with a dot) and renamed over the old one, so dnsmasq never reads half a file.
// A name may have several addresses (every live replica of an app): one line each, and dnsmasq answers
// them all in one A answer, which the app's route balances over (proxy/config.ts).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Header } from 'tar';

/** A DNS name svc writes (`<app>.svc.internal`, lower case); it is also the file name, so nothing else passes. */
const NAME = /^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Absolute DNS name -> its IPv4 address, or the addresses of all its live replicas. */
export type DnsRecords = Record<string, string | readonly string[]>;

/**
 * Pure: file name -> content for the records. Invalid names and addresses are dropped (a name left with
 * none has no file: NXDOMAIN). Addresses are deduplicated and sorted, so the same set in any order is the
 * same file and is not rewritten.
 */
export function hostsFiles(records: DnsRecords): Map<string, string> {
  const files = new Map<string, string>();
  for (const [dnsName, addrs] of Object.entries(records)) {
    const name = dnsName.toLowerCase().replace(/\.$/, '');
    if (!NAME.test(name)) continue;
    const valid = [...new Set(typeof addrs === 'string' ? [addrs] : addrs)].filter((a) => IPV4.test(a)).sort(byAddress);
    if (valid.length > 0) files.set(name, valid.map((a) => `${a} ${name}\n`).join(''));
  }
  return files;
}

/** Numeric order of dotted IPv4 addresses (10.0.0.9 before 10.0.0.10). */
function byAddress(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/**
 * Makes `dir` hold exactly the hosts files of `records`: writes those whose content differs, removes
 * the others (an app without a live address answers NXDOMAIN). Files are mode 600: dnsmasq runs as svc's
 * own user (see dnsmasq.ts).
 */
export async function writeHostsDir(dir: string, records: DnsRecords): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const wanted = hostsFiles(records);
  const present = (await readdir(dir)).filter((f) => !f.startsWith('.'));
  for (const [name, content] of wanted) {
    const file = join(dir, name);
    const current = await readFile(file, 'utf8').catch(() => undefined);
    if (current === content) continue;
    const tmp = join(dir, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, content, { mode: 0o600 });
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
  for (const f of present) if (!wanted.has(f)) await rm(join(dir, f), { force: true });
}

/**
 * Pure: a tar of the hosts files to write into a resolver's directory on another node (the engine's archive
 * endpoint, through the node's agent: docs/decisions/0047-swarm-edge-resolves.md): every file of `wanted`
 * whose content differs from `have`, and an empty one for each name of `have` no longer wanted (NXDOMAIN; the
 * archive endpoint cannot remove a file). Mode 644: the resolver reads them as nobody. Undefined: nothing to write.
 */
export function hostsTar(wanted: Map<string, string>, have: ReadonlyMap<string, string>): Buffer | undefined {
  const changed = [...wanted].filter(([name, text]) => have.get(name) !== text);
  for (const [name, text] of have) if (!wanted.has(name) && text !== '') changed.push([name, '']);
  if (changed.length === 0) return undefined;
  const blocks = changed.sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([name, text]) => {
    const body = Buffer.from(text);
    const h = new Header({ path: name, type: 'File', mode: 0o644, size: body.length, mtime: new Date(0), uid: 0, gid: 0 });
    h.encode();
    return [h.block!, body, Buffer.alloc((512 - (body.length % 512)) % 512)];
  });
  return Buffer.concat([...blocks, Buffer.alloc(1024)]);
}

/** Pure: the regular files of a tar (the engine's archive of a directory: `<dir>/<name>` entries) by base name. */
export function filesOfTar(tar: Buffer): Map<string, string> {
  const files = new Map<string, string>();
  for (let at = 0; at + 512 <= tar.length; ) {
    const block = tar.subarray(at, at + 512);
    if (block.every((b) => b === 0)) break;
    const h = new Header(block);
    if (!h.cksumValid) throw new Error('the engine answered a tar with a bad header checksum');
    const size = h.size ?? 0;
    const name = (h.path ?? '').split('/').filter(Boolean).pop() ?? '';
    if ((h.type === 'File' || h.type === 'OldFile') && NAME.test(name)) files.set(name, tar.subarray(at + 512, at + 512 + size).toString('utf8'));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
