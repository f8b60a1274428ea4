// Builds local stand-ins for the managed-service images (postgres:16, mysql:8, redis:7-alpine,
// dxflrs/garage:v1.0.1) without any container registry: one debootstrap'd Debian bookworm rootfs
// with every engine is imported as `svc-test/engines-base`, and each service image is a small
// `docker build` FROM it with its own entrypoint (test/support/images/<name>/).
//
// ensureServiceImages() skips every image whose tag exists and builds the base only when an image
// is missing. Set SVC_TEST_ENGINES_TARBALL=/path/engines-base.tar to cache the rootfs tarball
// between CI runs (imported from when present, written after a fresh debootstrap otherwise).
import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const ENGINES_BASE_IMAGE = 'svc-test/engines-base';
export const POSTGRES_TEST_IMAGE = 'svc-test/postgres:16';
export const MYSQL_TEST_IMAGE = 'svc-test/mysql:8';
export const REDIS_TEST_IMAGE = 'svc-test/redis:7';
export const GARAGE_TEST_IMAGE = 'svc-test/garage:1';

/** Tag per service type, ready for SVC_IMAGE_POSTGRES / _MYSQL / _REDIS / _GARAGE. */
export const SERVICE_TEST_IMAGES = {
  postgres: POSTGRES_TEST_IMAGE,
  mysql: MYSQL_TEST_IMAGE,
  redis: REDIS_TEST_IMAGE,
  garage: GARAGE_TEST_IMAGE,
} as const;

/** The environment that points svc at the stand-ins. */
export const serviceImageEnv = (): Record<string, string> => ({
  SVC_IMAGE_POSTGRES: POSTGRES_TEST_IMAGE,
  SVC_IMAGE_MYSQL: MYSQL_TEST_IMAGE,
  SVC_IMAGE_REDIS: REDIS_TEST_IMAGE,
  SVC_IMAGE_GARAGE: GARAGE_TEST_IMAGE,
});

const IMAGES_DIR = join(dirname(fileURLToPath(import.meta.url)), 'images');
const MIRROR = process.env.SVC_TEST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const SUITE = 'bookworm';
const PACKAGES = [
  'postgresql',
  'mariadb-server',
  'mariadb-client',
  'redis-server',
  'redis-tools',
  'nodejs',
  'ca-certificates',
  'procps',
];

/** Image tag -> build context directory under test/support/images. */
const SERVICE_BUILDS: ReadonlyArray<readonly [tag: string, dir: string]> = [
  [POSTGRES_TEST_IMAGE, 'postgres'],
  [MYSQL_TEST_IMAGE, 'mysql'],
  [REDIS_TEST_IMAGE, 'redis'],
  [GARAGE_TEST_IMAGE, 'garage-standin'],
];

type Log = (line: string) => void;
const defaultLog: Log = (line) => console.log(`[service-images] ${line}`);

async function imageExists(tag: string): Promise<boolean> {
  try {
    await execFileP('docker', ['image', 'inspect', '--format', '{{.Id}}', tag], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** Runs a command with its output appended to a log file; rejects with the log's tail on failure. */
function run(cmd: string, args: string[], logFile: string, opts: { cwd?: string; stdinFile?: string } = {}) {
  return new Promise<void>((resolve, reject) => {
    const out = createWriteStream(logFile, { flags: 'a' });
    out.write(`\n$ ${cmd} ${args.join(' ')}\n`);
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.stdin.end();
    child.on('error', (e) => {
      out.end();
      reject(e);
    });
    child.on('close', (code) => {
      out.end(() => {
        if (code === 0) resolve();
        else reject(new Error(`${cmd} ${args.slice(0, 3).join(' ')} ... exited with ${code}; see ${logFile}`));
      });
    });
  });
}

const seconds = (t0: number) => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

async function buildBase(log: Log, logFile: string): Promise<void> {
  const cached = process.env.SVC_TEST_ENGINES_TARBALL;
  if (cached && existsSync(cached)) {
    const t0 = Date.now();
    log(`importing ${ENGINES_BASE_IMAGE} from cached ${cached}`);
    await importTarball(cached, logFile);
    log(`imported ${ENGINES_BASE_IMAGE} in ${seconds(t0)}`);
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'svc-engines-'));
  const rootfs = join(work, 'rootfs');
  const tarball = join(work, 'engines-base.tar');
  try {
    let t0 = Date.now();
    log(`debootstrap ${SUITE} (${PACKAGES.join(', ')}) from ${MIRROR}; log: ${logFile}`);
    await run(
      'debootstrap',
      ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, rootfs, MIRROR],
      logFile,
    );
    log(`debootstrap done in ${seconds(t0)}`);

    t0 = Date.now();
    // Slim the rootfs: downloaded .debs, apt lists, docs; clusters and datadirs created by postinst.
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info']) {
      const p = join(rootfs, dir);
      if (!existsSync(p)) continue;
      for (const entry of readdirSync(p)) {
        if (entry === 'partial') continue;
        rmSync(join(p, entry), { recursive: true, force: true });
      }
    }
    // No services get started from the image; keep an empty policy for any later apt use.
    writeFileSync(join(rootfs, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    await run(
      'tar',
      ['--numeric-owner', '--xattrs', '-C', rootfs, '--exclude=./dev/*', '--exclude=./proc/*', '--exclude=./sys/*', '-cf', tarball, '.'],
      logFile,
    );
    log(`rootfs tarball in ${seconds(t0)}`);

    t0 = Date.now();
    await importTarball(tarball, logFile);
    log(`docker import ${ENGINES_BASE_IMAGE} in ${seconds(t0)}`);
    if (cached) {
      mkdirSync(dirname(cached), { recursive: true });
      copyFileSync(tarball, cached);
      log(`cached the rootfs tarball at ${cached}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function importTarball(tarball: string, logFile: string) {
  await run(
    'docker',
    [
      'import',
      '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change', 'ENV LANG=C.UTF-8',
      '--change', 'CMD ["/bin/bash"]',
      '--message', `svc-test engines base: debootstrap ${SUITE} minbase + ${PACKAGES.join(',')}`,
      tarball,
      ENGINES_BASE_IMAGE,
    ],
    logFile,
  );
}

async function buildService(tag: string, dir: string, logFile: string) {
  const ctx = await mkdtemp(join(tmpdir(), 'svc-image-ctx-'));
  try {
    const src = join(IMAGES_DIR, dir);
    for (const f of readdirSync(src)) copyFileSync(join(src, f), join(ctx, f));
    await run('docker', ['build', '--label', 'svc.test-image=true', '-t', tag, ctx], logFile);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/** A cross-process lock (mkdir is atomic), so concurrent callers build once. */
async function withLock<T>(fn: () => Promise<T>, log: Log): Promise<T> {
  const lock = join(tmpdir(), 'svc-test-service-images.lock');
  const deadline = Date.now() + 20 * 60_000;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A lock left by a dead process is taken over.
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      if (Number.isInteger(holder) && holder > 0 && !pidAlive(holder)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the image build lock ${lock}`);
      if (!announced) log(`waiting for another build (lock ${lock})`);
      announced = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface EnsureResult {
  built: string[];
  skipped: string[];
  baseBuilt: boolean;
  seconds: number;
}

/**
 * Makes sure the four service images exist, building what is missing. Idempotent; safe to call from
 * several processes (a lock file serializes builds). Needs root for debootstrap on a cold machine.
 */
export async function ensureServiceImages(opts: { log?: Log; force?: boolean } = {}): Promise<EnsureResult> {
  const log = opts.log ?? defaultLog;
  const t0 = Date.now();
  const missing = async () => {
    const out: Array<readonly [string, string]> = [];
    for (const b of SERVICE_BUILDS) if (opts.force || !(await imageExists(b[0]))) out.push(b);
    return out;
  };
  if ((await missing()).length === 0) {
    return { built: [], skipped: SERVICE_BUILDS.map((b) => b[0]), baseBuilt: false, seconds: 0 };
  }
  return withLock(async () => {
    const todo = await missing(); // another process may have built them meanwhile
    const skipped = SERVICE_BUILDS.map((b) => b[0]).filter((t) => !todo.some((b) => b[0] === t));
    if (todo.length === 0) return { built: [], skipped, baseBuilt: false, seconds: 0 };
    const logFile = join(tmpdir(), `svc-test-images-${Date.now()}.log`);
    let baseBuilt = false;
    if (opts.force || !(await imageExists(ENGINES_BASE_IMAGE))) {
      await buildBase(log, logFile);
      baseBuilt = true;
    }
    for (const [tag, dir] of todo) {
      const t1 = Date.now();
      await buildService(tag, dir, logFile);
      log(`built ${tag} in ${seconds(t1)}`);
    }
    log(`service images ready in ${seconds(t0)} (built: ${todo.map((b) => b[0]).join(', ')})`);
    return { built: todo.map((b) => b[0]), skipped, baseBuilt, seconds: (Date.now() - t0) / 1000 };
  }, log);
}
