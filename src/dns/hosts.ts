// The records dnsmasq answers: one hosts file per app in its `--hostsdir`, which dnsmasq re-reads by
// itself (inotify) when a file is replaced or removed. Each file is written to a dot-file first (dnsmasq
// ignores names starting with a dot) and renamed over the old one, so dnsmasq never reads half a file.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A DNS name svc writes (`<app>.svc.internal`, lower case); it is also the file name, so nothing else passes. */
const NAME = /^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Pure: file name -> content for the records (absolute DNS name -> IPv4). Invalid entries are dropped. */
export function hostsFiles(records: Record<string, string>): Map<string, string> {
  const files = new Map<string, string>();
  for (const [dnsName, addr] of Object.entries(records)) {
    const name = dnsName.toLowerCase().replace(/\.$/, '');
    if (!NAME.test(name) || !IPV4.test(addr)) continue;
    files.set(name, `${addr} ${name}\n`);
  }
  return files;
}

/**
 * Makes `dir` hold exactly the hosts files of `records`: writes those whose content differs, removes
 * the others (an app without a live address answers NXDOMAIN). Files are mode 600: dnsmasq runs as svc's
 * own user (see dnsmasq.ts).
 */
export async function writeHostsDir(dir: string, records: Record<string, string>): Promise<void> {
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
