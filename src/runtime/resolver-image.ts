// svc's own resolver image for a Swarm's edge, when SVC_RESOLVER_IMAGE is unset (docs/decisions/0058-own-resolver-image.md):
// built on the manager from the host's own dnsmasq (the binary, the libraries `ldd` lists, a minimal passwd) as
// an `svc-build/` image, so the Swarm runtime pushes it to the Swarm's registry (SVC_REGISTRY or svc's own) as it
// does an app's build, and every edge node pulls it from there. Tagged by the bytes it holds.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../log.js';
import type { Runtime } from './runtime.js';

/** Debian's dnsmasq (package dnsmasq-base), the one the host's DNS responder runs too. */
export const RESOLVER_BINARY = '/usr/sbin/dnsmasq';
/** The repository of the image (no app is named with a dot, so no app's images share it). */
export const RESOLVER_REPOSITORY = 'svc-build/svc.dnsmasq';

const PASSWD = 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnogroup:x:65534:\n';

/** Pure: the library paths `ldd` lists for a binary (the `=> /path` targets and the loader). */
export function lddPaths(output: string): string[] {
  const paths: string[] = [];
  for (const line of output.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) paths.push(m[1]!);
  }
  return paths;
}

/** Pure: the build's Dockerfile: the rootfs as it is, dnsmasq as entrypoint (svc passes its arguments). */
export const resolverDockerfile = (binary: string) => `FROM scratch\nCOPY rootfs/ /\nENTRYPOINT ["${binary}"]\n`;

export interface ResolverImageOptions {
  runtime: Pick<Runtime, 'build'>;
  /** Where the nodes pull an image svc built (the Swarm runtime's `clusterImage`). */
  clusterImage: (tag: string) => Promise<string>;
  log: Logger;
  /** Default RESOLVER_BINARY. */
  binary?: string;
}

/** The image's reference, built and pushed at the first call (once per process; a failure is tried again at the next). */
export function ownResolverImage(o: ResolverImageOptions): () => Promise<string> {
  let once: Promise<string> | undefined;
  return () =>
    (once ??= build(o).catch((err: Error) => {
      once = undefined;
      throw err;
    }));
}

async function build(o: ResolverImageOptions): Promise<string> {
  const binary = o.binary ?? RESOLVER_BINARY;
  if (!existsSync(binary)) {
    throw new Error(`SVC_RESOLVER_IMAGE is unset and this host has no ${binary} to build svc's resolver image from: install dnsmasq (Debian: apt install dnsmasq-base) or set SVC_RESOLVER_IMAGE to an image with /usr/sbin/dnsmasq`);
  }
  // A static binary: ldd fails, and there is nothing to copy.
  const ldd = await promisify(execFile)('ldd', [binary]).then((r) => r.stdout, () => '');
  const dir = await mkdtemp(join(tmpdir(), 'svc-resolver-image-'));
  try {
    const hash = createHash('sha256');
    for (const path of [binary, ...lddPaths(ldd)].sort()) {
      const dest = join(dir, 'rootfs', path);
      await mkdir(dirname(dest), { recursive: true });
      await copyFile(await realpath(path), dest);
      await chmod(dest, 0o755);
      hash.update(`${path}\0`).update(await readFile(dest));
    }
    await mkdir(join(dir, 'rootfs', 'etc'));
    await writeFile(join(dir, 'rootfs', 'etc', 'passwd'), PASSWD);
    await writeFile(join(dir, 'rootfs', 'etc', 'group'), GROUP);
    await writeFile(join(dir, 'Dockerfile'), resolverDockerfile(binary));
    const tag = `${RESOLVER_REPOSITORY}:${hash.update(resolverDockerfile(binary) + PASSWD + GROUP).digest('hex').slice(0, 12)}`;
    o.log.info('building the resolver image from this host\'s dnsmasq (SVC_RESOLVER_IMAGE is unset)', { image: tag });
    await o.runtime.build(dir, tag);
    return await o.clusterImage(tag);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
