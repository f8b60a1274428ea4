// Local web-app images for integration tests (no registry is reachable): `FROM scratch` plus Debian's
// static busybox serving /www with `httpd` on port 3000. Built once through the adapter's `build` and
// reused by tag. Variants: v1/v2 (index says which), unhealthy (`/` answers 500), crash (exits 1 at once),
// env (GET /cgi-bin/env prints the container's environment), and for the watch after the switch:
// exits-later (healthy, then exits 1 after EXIT_AFTER seconds, default 3) and decays (healthy, then `/`
// answers 500 once FAIL_AFTER seconds, default 3, have passed), and oom (allocates ALLOC_MB, default 64,
// in its shell at once: under a smaller memory cap the engine kills it, OOMKilled).
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Runtime } from '../../src/runtime/runtime.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { silentLogger } from '../../src/log.js';

export const WEB_V1 = 'svc-test/web:v1';
export const WEB_V2 = 'svc-test/web:v2';
export const WEB_UNHEALTHY = 'svc-test/web:unhealthy';
export const WEB_CRASH = 'svc-test/web:crash';
export const WEB_ENV = 'svc-test/web:env';
export const WEB_EXITS_LATER = 'svc-test/web:exits-later';
export const WEB_DECAYS = 'svc-test/web:decays';
export const WEB_OOM = 'svc-test/web:oom';
/** Port every web test image listens on. */
export const WEB_PORT = 3000;
export const TEST_IMAGES = [WEB_V1, WEB_V2, WEB_UNHEALTHY, WEB_CRASH, WEB_ENV, WEB_EXITS_LATER, WEB_DECAYS, WEB_OOM] as const;

const BUSYBOX = '/bin/busybox';
const APPLETS = ['sh', 'httpd', 'env', 'echo', 'cat', 'sleep', 'wget', 'ls', 'kill', 'date', 'mkdir', 'head', 'tr'];

/** Files of an image's rootfs, besides busybox and its applet links; executable when the value starts "#!". */
type Files = Record<string, string>;

const page = (version: string) =>
  `<!doctype html><title>svc test ${version}</title><h1>svc-test web ${version}</h1>\n`;

/** Start script: one line on stdout (tests follow logs for it), then httpd in the foreground. */
const start = (name: string) => `#!/bin/sh\necho "svc-test web ${name} starting on port ${WEB_PORT}"\nexec httpd -f -v -p ${WEB_PORT} -h /www\n`;

/** A CGI that accepts POST (busybox httpd answers 501 to a POST of a static file) and names the version. */
const echo = (version: string) => `#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\necho "posted to ${version}"\n`;

const VARIANTS: Record<(typeof TEST_IMAGES)[number], Files> = {
  [WEB_V1]: { '/start': start('v1'), '/www/index.html': page('v1'), '/www/health': 'ok\n', '/www/cgi-bin/echo': echo('v1') },
  [WEB_V2]: { '/start': start('v2'), '/www/index.html': page('v2'), '/www/health': 'ok\n', '/www/cgi-bin/echo': echo('v2') },
  [WEB_UNHEALTHY]: {
    '/start': start('unhealthy'),
    // No index.html: httpd runs the directory's index.cgi for `/`, which answers 500.
    '/www/cgi-bin/index.cgi': '#!/bin/sh\nprintf "Status: 500 Internal Server Error\\r\\nContent-Type: text/plain\\r\\n\\r\\nunhealthy\\n"\n',
  },
  [WEB_CRASH]: { '/start': '#!/bin/sh\necho "svc-test web crash: exiting with 1" >&2\nexit 1\n' },
  [WEB_EXITS_LATER]: {
    '/start':
      `#!/bin/sh\necho "svc-test web exits-later starting on port ${WEB_PORT}"\nhttpd -f -v -p ${WEB_PORT} -h /www &\n` +
      'sleep "${EXIT_AFTER:-3}"\necho "svc-test web exits-later: exiting with 1" >&2\nexit 1\n',
    '/www/index.html': page('exits-later'),
    '/www/cgi-bin/echo': echo('exits-later'),
  },
  [WEB_DECAYS]: {
    '/start':
      '#!/bin/sh\nmkdir -p /tmp\ndate +%s > /tmp/started\necho "${FAIL_AFTER:-3}" > /tmp/fail-after\n' +
      `echo "svc-test web decays starting on port ${WEB_PORT}"\nexec httpd -f -v -p ${WEB_PORT} -h /www\n`,
    // No index.html: `/` runs cgi-bin/index.cgi, which answers 200 until FAIL_AFTER seconds passed, then 500.
    '/www/cgi-bin/index.cgi':
      '#!/bin/sh\nage=$(( $(date +%s) - $(cat /tmp/started) ))\nif [ "$age" -ge "$(cat /tmp/fail-after)" ]; then\n' +
      '  printf "Status: 500 Internal Server Error\\r\\nContent-Type: text/plain\\r\\n\\r\\ndecayed\\n"\nelse\n' +
      '  printf "Content-Type: text/html\\r\\n\\r\\n<h1>svc-test web decays</h1>\\n"\nfi\n',
  },
  [WEB_OOM]: {
    // The command substitution holds all of it in the shell's memory (a tmpfs would not be the process's).
    '/start':
      '#!/bin/sh\necho "svc-test web oom: allocating ${ALLOC_MB:-64} MB"\n' +
      'x=$(head -c $(( ${ALLOC_MB:-64} * 1048576 )) /dev/zero | tr "\\0" a)\necho "svc-test web oom: still alive after ${#x} bytes"\n',
  },
  [WEB_ENV]: {
    '/start': start('env'),
    '/www/index.html': page('env'),
    '/www/cgi-bin/env': '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\nenv\n',
  },
};

const DOCKERFILE = `FROM scratch
COPY rootfs/ /
ENV PATH=/bin
EXPOSE ${WEB_PORT}
CMD ["/bin/sh", "/start"]
`;

/** Writes the build context of one variant into `dir`. */
function writeContext(dir: string, files: Files) {
  const root = join(dir, 'rootfs');
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(BUSYBOX, join(root, 'bin/busybox'));
  chmodSync(join(root, 'bin/busybox'), 0o755);
  for (const a of APPLETS) symlinkSync('busybox', join(root, 'bin', a));
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content, { mode: content.startsWith('#!') ? 0o755 : 0o644 });
  }
  writeFileSync(join(dir, 'Dockerfile'), DOCKERFILE);
}

let once: Promise<void> | undefined;

/** Builds every missing test image (skips tags the engine already has). Memoised per process. */
export function ensureTestImages(runtime: Runtime = createDockerRuntime({ log: silentLogger })): Promise<void> {
  return (once ??= build(runtime).catch((err) => {
    once = undefined;
    throw err;
  }));
}

async function build(runtime: Runtime) {
  for (const tag of TEST_IMAGES) {
    if (await runtime.hasImage(tag)) continue;
    const dir = await mkdtemp(join(tmpdir(), 'svc-test-image-'));
    try {
      writeContext(dir, VARIANTS[tag]);
      const log: string[] = [];
      await runtime.build(dir, tag, (l) => log.push(l)).catch((err: Error) => {
        throw new Error(`building ${tag} failed: ${err.message}\n${log.join('\n')}`);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
