// svc's own resolver image (SVC_RESOLVER_IMAGE unset, docs/decisions/0058-own-resolver-image.md): the build
// context made from this host's real dnsmasq and the libraries its real `ldd` lists, the tag named by those
// bytes, the reference the nodes pull (the registry's), one build per process; without dnsmasq a clear error.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lddPaths, ownResolverImage, RESOLVER_BINARY, resolverDockerfile } from '../../../src/runtime/resolver-image.js';
import { silentLogger } from '../../../src/log.js';

describe('lddPaths', () => {
  it('the `=> /path` targets and the loader, nothing else', () => {
    const out = '\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n';
    expect(lddPaths(out)).toEqual(['/lib/x86_64-linux-gnu/libc.so.6', '/lib64/ld-linux-x86-64.so.2']);
  });
});

describe('ownResolverImage', () => {
  /** A build that reads the context it is given (the Runtime port's `build`), and the registry's name of a tag. */
  const rig = (binary?: string) => {
    const builds: { tag: string; dockerfile: string; files: Record<string, boolean> }[] = [];
    const image = ownResolverImage({
      runtime: {
        async build(dir, tag) {
          const has = (p: string) => existsSync(join(dir, 'rootfs', p));
          builds.push({ tag, dockerfile: readFileSync(join(dir, 'Dockerfile'), 'utf8'), files: { dnsmasq: has(RESOLVER_BINARY), passwd: has('etc/passwd'), libc: has('lib/x86_64-linux-gnu/libc.so.6') || has('usr/lib/x86_64-linux-gnu/libc.so.6') } });
        },
      },
      clusterImage: async (tag) => `registry.test:5000/${tag}`,
      log: silentLogger,
      binary,
    });
    return { builds, image };
  };

  it("builds from the host's dnsmasq and its libraries, tagged by their bytes, once per process; the nodes pull the registry's name", async () => {
    const a = rig();
    const ref = await a.image();
    expect(a.builds).toHaveLength(1);
    const b = a.builds[0]!;
    expect(b.tag).toMatch(/^svc-build\/svc\.dnsmasq:[0-9a-f]{12}$/);
    expect(ref).toBe(`registry.test:5000/${b.tag}`);
    expect(b.dockerfile).toBe(resolverDockerfile(RESOLVER_BINARY));
    expect(b.files).toEqual({ dnsmasq: true, passwd: true, libc: true });
    expect(await a.image()).toBe(ref);
    expect(a.builds).toHaveLength(1);
    // Another process on the same host: the same tag (the engine's cache and the registry keep it).
    const again = rig();
    await again.image();
    expect(again.builds[0]!.tag).toBe(b.tag);
  });

  it('without dnsmasq on the host: an error naming the setting and the package, asked again next time', async () => {
    const none = rig('/nonexistent/dnsmasq');
    await expect(none.image()).rejects.toThrow(/SVC_RESOLVER_IMAGE is unset and this host has no \/nonexistent\/dnsmasq .*dnsmasq-base/);
    await expect(none.image()).rejects.toThrow(/SVC_RESOLVER_IMAGE/);
    expect(none.builds).toEqual([]);
  });
});
