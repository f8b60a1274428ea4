// The one local image the stack tests run every service of (issue 32), built like images.ts builds the web
// ones (`FROM scratch` plus Debian's static busybox, once by tag): its Compose `command` says which part it
// plays. /web: httpd on 3000 (GET / and POST /cgi-bin/echo answer). /db: writes a line to
// /data/log (its volume), marks /data/ready, serves on 5432. /cache: serves on 6379. /worker: reaches db
// and cache by their Compose names on the stack network (wget), then sleeps.
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Runtime } from '../../src/runtime/runtime.js';

export const STACK_IMAGE = 'svc-test/stack:1';

const APPLETS = ['sh', 'httpd', 'env', 'echo', 'cat', 'sleep', 'wget', 'ls', 'date', 'mkdir', 'test', 'true', 'false', 'printf', 'touch'];

const FILES: Record<string, string> = {
  '/web': '#!/bin/sh\necho "web starting ${VERSION:-v1}"\nexec httpd -f -v -p 3000 -h /www\n',
  '/www/index.html': 'web\n',
  '/www/cgi-bin/echo': '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\necho posted\n',
  '/db': '#!/bin/sh\nmkdir -p /data /tmp/www\necho "start $(date +%s) ${VERSION:-v1}" >> /data/log\necho db > /tmp/www/index.html\ntouch /data/ready\nexec httpd -f -p 5432 -h /tmp/www\n',
  '/cache': '#!/bin/sh\nmkdir -p /tmp/www\necho cache > /tmp/www/index.html\nexec httpd -f -p 6379 -h /tmp/www\n',
  '/worker': '#!/bin/sh\nwhile true; do\n  if wget -q -O - http://db:5432/ >/dev/null 2>&1 && wget -q -O - http://cache:6379/ >/dev/null 2>&1; then echo "worker reached db and cache"; touch /tmp/ok; else echo "worker: db or cache unreachable"; fi\n  sleep 1\ndone\n',
};

const DOCKERFILE = `FROM scratch
COPY rootfs/ /
ENV PATH=/bin
CMD ["/bin/sh", "/web"]
`;

export async function ensureStackImage(runtime: Runtime): Promise<void> {
  if (await runtime.hasImage(STACK_IMAGE)) return;
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-stack-image-'));
  try {
    const root = join(dir, 'rootfs');
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'tmp'), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    copyFileSync('/bin/busybox', join(root, 'bin/busybox'));
    chmodSync(join(root, 'bin/busybox'), 0o755);
    for (const a of [...APPLETS, 'chmod']) symlinkSync('busybox', join(root, 'bin', a));
    for (const [path, content] of Object.entries(FILES)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content, { mode: 0o755 });
    }
    writeFileSync(join(dir, 'Dockerfile'), DOCKERFILE);
    const log: string[] = [];
    await runtime.build(dir, STACK_IMAGE, (l) => log.push(l)).catch((err: Error) => {
      throw new Error(`building ${STACK_IMAGE} failed: ${err.message}\n${log.join('\n')}`);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
