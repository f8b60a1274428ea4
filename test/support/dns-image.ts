// A local resolver image for the Swarm edge's tests (no registry is reachable): Debian's /usr/sbin/dnsmasq
// with the libraries `ldd` lists and a minimal /etc/passwd, tarred and `docker import`ed, as caddy-image.ts
// does for Caddy. Built once, reused by tag.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { hasImage, lddPaths } from './caddy-image.js';

export const DNS_IMAGE = 'svc-test/dnsmasq:2';
const BIN = '/usr/sbin/dnsmasq';
const run = promisify(execFile);

let once: Promise<string> | undefined;

/** Builds DNS_IMAGE when the engine lacks it; resolves the tag. Memoised per process. */
export function ensureDnsImage(): Promise<string> {
  return (once ??= build().catch((err) => {
    once = undefined;
    throw err;
  }));
}

async function build(): Promise<string> {
  if (await hasImage(DNS_IMAGE)) return DNS_IMAGE;
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-dns-image-'));
  try {
    const root = join(dir, 'rootfs');
    const put = (src: string, dest: string) => {
      mkdirSync(dirname(join(root, dest)), { recursive: true });
      copyFileSync(realpathSync(src), join(root, dest));
      chmodSync(join(root, dest), 0o755);
    };
    put(BIN, BIN);
    for (const lib of lddPaths((await run('ldd', [BIN])).stdout)) put(lib, lib);
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n');
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    mkdirSync(join(root, 'tmp'), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    const tar = join(dir, 'rootfs.tar');
    await run('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-cf', tar, '.']);
    await run('docker', ['import', '--change', `ENTRYPOINT ["${BIN}"]`, tar, DNS_IMAGE], { timeout: 120_000 });
    return DNS_IMAGE;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
