// A local Caddy image for tests and the benchmarks (no registry is reachable), the stand-in of `caddy:2`:
// Caddy 2.11 from Debian unstable (caddy-unstable.ts), whatever SVC_TEST_CADDY says for host Caddies. Its
// binary is dynamically linked, so its libraries (from ldd), the CA bundle and a minimal /etc/passwd go
// into a rootfs that is tarred and `docker import`ed with caddy as entrypoint. Built once, reused by tag
// while its `svc.test.caddy` label names the same Caddy version (an image built from bookworm's 2.6.2
// by an older checkout is built again). Uses the docker CLI (the Runtime port has no import).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync, writeFileSync, chmodSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { caddyVersionOf, unstableCaddyBin } from './caddy-unstable.js';
import { lddPaths } from '../../src/runtime/resolver-image.js';

export const CADDY_IMAGE = 'svc-test/caddy:2';
const run = promisify(execFile);

export { lddPaths };

export async function hasImage(tag: string): Promise<boolean> {
  return (await imageLabel(tag, 'svc.test.caddy')) !== undefined;
}

/** The image's label value ('' when it has none), undefined when there is no such image. */
async function imageLabel(tag: string, label: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('docker', ['image', 'inspect', '--format', `{{index .Config.Labels "${label}"}}`, tag], { timeout: 30_000 });
    return stdout.trim().replace(/^<no value>$/, '');
  } catch {
    return undefined;
  }
}

let once: Promise<string> | undefined;

/** Builds CADDY_IMAGE when the engine lacks it; resolves the tag. Memoised per process. */
export function ensureCaddyImage(): Promise<string> {
  return (once ??= build().catch((err) => {
    once = undefined;
    throw err;
  }));
}

async function build(): Promise<string> {
  const bin = unstableCaddyBin();
  const version = caddyVersionOf(bin);
  if ((await imageLabel(CADDY_IMAGE, 'svc.test.caddy')) === version) return CADDY_IMAGE;
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-caddy-image-'));
  try {
    const root = join(dir, 'rootfs');
    const put = (src: string, dest: string, mode?: number) => {
      mkdirSync(dirname(join(root, dest)), { recursive: true });
      copyFileSync(realpathSync(src), join(root, dest));
      if (mode !== undefined) chmodSync(join(root, dest), mode);
    };
    put(bin, '/usr/bin/caddy', 0o755);
    const { stdout } = await run('ldd', [bin]);
    for (const lib of lddPaths(stdout)) put(lib, lib, 0o755);
    if (existsSync('/etc/ssl/certs/ca-certificates.crt')) put('/etc/ssl/certs/ca-certificates.crt', '/etc/ssl/certs/ca-certificates.crt', 0o644);
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n');
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    for (const d of ['tmp', 'data', 'config', 'root']) mkdirSync(join(root, d), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    const tar = join(dir, 'rootfs.tar');
    await run('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-cf', tar, '.']);
    await run(
      'docker',
      [
        'import',
        '--change', 'ENTRYPOINT ["/usr/bin/caddy"]',
        '--change', 'CMD ["run"]',
        '--change', 'ENV XDG_DATA_HOME=/data',
        '--change', 'ENV XDG_CONFIG_HOME=/config',
        '--change', 'ENV HOME=/root',
        '--change', `LABEL svc.test.caddy=${version}`,
        tar,
        CADDY_IMAGE,
      ],
      { timeout: 120_000 },
    );
    return CADDY_IMAGE;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
