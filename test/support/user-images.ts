// Test images that run as their own user, uid 1001 (issue 35), built like images.ts builds the web ones
// (`FROM scratch` plus Debian's static busybox, through the adapter's `build`, once by tag) with `USER 1001`
// and no /etc/passwd, as bitnami's images run (uid 1001, group 0):
// - WEB_UID1001: httpd on port 3000; GET /cgi-bin/write appends a line to /data/log.txt and answers `wrote`,
//   or `failed: <why>` when it cannot (an app that lost its own files to root after a restore).
// - REDIS_UID1001: a stand-in for a redis image that runs as its own user: `redis-server ... --dir /data`
//   enters /data and appends to /data/appendonly.aof, then listens on 6379 (httpd: only the TCP check of
//   the catalog's readiness connects there); `redis-cli ... ping` appends to the same file and says PONG
//   only when that write worked, so the catalog's readiness check passes only while the service writes.
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Runtime } from '../../src/runtime/runtime.js';

export const WEB_UID1001 = 'svc-test/web:uid1001';
export const REDIS_UID1001 = 'svc-test/redis:uid1001';

const APPLETS = ['sh', 'httpd', 'echo', 'cat', 'id', 'date', 'mkdir', 'ls', 'sleep', 'printf', 'wc'];

const IMAGES: Record<string, Record<string, string>> = {
  [WEB_UID1001]: {
    '/start': '#!/bin/sh\necho "svc-test web uid1001 starting as $(id -u):$(id -g)"\nexec httpd -f -v -p 3000 -h /www\n',
    '/www/index.html': '<h1>svc-test web uid1001</h1>\n',
    '/www/cgi-bin/write':
      '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\n' +
      'if out=$( (mkdir -p /data/sub && echo "$(date +%s) $(id -u)" >> /data/log.txt && echo x >> /data/sub/more.txt) 2>&1 ); then echo wrote; else echo "failed: $out"; fi\n',
  },
  [REDIS_UID1001]: {
    '/bin/redis-server': '#!/bin/sh\ncd /data || exit 1\necho "start $(date +%s) as $(id -u):$(id -g)" >> /data/appendonly.aof || exit 1\nexec httpd -f -p 6379 -h /www\n',
    '/bin/redis-cli': '#!/bin/sh\necho "ping $(date +%s)" >> /data/appendonly.aof && echo PONG\n',
    '/www/index.html': 'not redis\n',
  },
};

const DOCKERFILE = `FROM scratch
COPY rootfs/ /
ENV PATH=/bin
USER 1001
EXPOSE 3000
CMD ["/bin/sh", "/start"]
`;

/** Builds the two images when the engine lacks them. */
export async function ensureUserImages(runtime: Runtime): Promise<void> {
  for (const [tag, files] of Object.entries(IMAGES)) {
    if (await runtime.hasImage(tag)) continue;
    const dir = await mkdtemp(join(tmpdir(), 'svc-test-uid-image-'));
    try {
      const root = join(dir, 'rootfs');
      mkdirSync(join(root, 'bin'), { recursive: true });
      copyFileSync('/bin/busybox', join(root, 'bin/busybox'));
      chmodSync(join(root, 'bin/busybox'), 0o755);
      for (const a of APPLETS) symlinkSync('busybox', join(root, 'bin', a));
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), content, { mode: content.startsWith('#!') ? 0o755 : 0o644 });
      }
      writeFileSync(join(dir, 'Dockerfile'), DOCKERFILE);
      const log: string[] = [];
      await runtime.build(dir, tag, (l) => log.push(l)).catch((err: Error) => {
        throw new Error(`building ${tag} failed: ${err.message}\n${log.join('\n')}`);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
