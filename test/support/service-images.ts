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
/** Debian trixie's engines (PostgreSQL 17, MariaDB 11.8, redis 8.0): the newer major of each upgrade test. */
export const ENGINES_TRIXIE_IMAGE = 'svc-test/engines-base:trixie';

/**
 * Stand-ins of two majors per engine for upgrade tests, each the suite's own packages behind the same
 * entrypoint contract as the official image of that version: postgres 15 (bookworm) and 17 (trixie),
 * redis 7.0 (bookworm) and 8.0 (trixie), MariaDB 10.11 (bookworm) and 11.8 (trixie) for mysql 8.0 and 8.4.
 */
export const VERSIONED_TEST_IMAGES = {
  postgres: { '15': 'svc-test/postgres:15', '17': 'svc-test/postgres:17' },
  redis: { '7': 'svc-test/redis:7', '8': 'svc-test/redis:8' },
  // 8.4-2: the stand-in's client takes the official client's TLS default (test/support/images/mysql/Dockerfile).
  mysql: { '8.0': 'svc-test/mysql:8', '8.4': 'svc-test/mysql:8.4-2' },
} as const;

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
/** One debootstrap'd suite imported as an image every stand-in of that suite is built FROM. */
interface Base {
  tag: string;
  suite: string;
  packages: string[];
  /** Cache of the rootfs tarball between runs (imported from when present). */
  tarballEnv: string;
}
const BOOKWORM_PACKAGES = [
  'postgresql',
  'mariadb-server',
  'mariadb-client',
  'redis-server',
  'redis-tools',
  'nodejs',
  'ca-certificates',
  'procps',
];
const BOOKWORM: Base = { tag: ENGINES_BASE_IMAGE, suite: 'bookworm', packages: BOOKWORM_PACKAGES, tarballEnv: 'SVC_TEST_ENGINES_TARBALL' };
const TRIXIE: Base = {
  tag: ENGINES_TRIXIE_IMAGE,
  suite: 'trixie',
  packages: ['postgresql', 'mariadb-server', 'mariadb-client', 'redis-server', 'redis-tools', 'ca-certificates', 'procps'],
  tarballEnv: 'SVC_TEST_ENGINES_TRIXIE_TARBALL',
};

interface Build {
  tag: string;
  /** Build context directory under test/support/images. */
  dir: string;
  base: Base;
  args?: Record<string, string>;
}

const onBookworm = (tag: string, dir: string, args?: Record<string, string>): Build => ({ tag, dir, base: BOOKWORM, args });
const SERVICE_BUILDS: readonly Build[] = [
  onBookworm(POSTGRES_TEST_IMAGE, 'postgres', { PG_MAJOR: '15' }),
  onBookworm(MYSQL_TEST_IMAGE, 'mysql'),
  onBookworm(REDIS_TEST_IMAGE, 'redis'),
  onBookworm(GARAGE_TEST_IMAGE, 'garage-standin'),
];
const onTrixie = (tag: string, dir: string, args: Record<string, string>): Build => ({ tag, dir, base: TRIXIE, args: { BASE: TRIXIE.tag, ...args } });
// Trixie first: its debootstrap is the long one, and the bookworm base may meanwhile be made by
// ensureServiceImages under its own lock.
const VERSIONED_BUILDS: readonly Build[] = [
  onTrixie(VERSIONED_TEST_IMAGES.postgres['17'], 'postgres', { PG_MAJOR: '17' }),
  onTrixie(VERSIONED_TEST_IMAGES.redis['8'], 'redis', {}),
  onTrixie(VERSIONED_TEST_IMAGES.mysql['8.4'], 'mysql', {}),
  onBookworm(VERSIONED_TEST_IMAGES.postgres['15'], 'postgres', { PG_MAJOR: '15' }),
  onBookworm(VERSIONED_TEST_IMAGES.redis['7'], 'redis'),
  onBookworm(VERSIONED_TEST_IMAGES.mysql['8.0'], 'mysql'),
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

async function buildBase(base: Base, log: Log, logFile: string): Promise<void> {
  const { suite: SUITE, packages: PACKAGES } = base;
  const cached = process.env[base.tarballEnv];
  if (cached && existsSync(cached)) {
    const t0 = Date.now();
    log(`importing ${base.tag} from cached ${cached}`);
    await importTarball(base, cached, logFile);
    log(`imported ${base.tag} in ${seconds(t0)}`);
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
    await importTarball(base, tarball, logFile);
    log(`docker import ${base.tag} in ${seconds(t0)}`);
    if (cached) {
      mkdirSync(dirname(cached), { recursive: true });
      copyFileSync(tarball, cached);
      log(`cached the rootfs tarball at ${cached}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function importTarball(base: Base, tarball: string, logFile: string) {
  await run(
    'docker',
    [
      'import',
      '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change', 'ENV LANG=C.UTF-8',
      '--change', 'CMD ["/bin/bash"]',
      '--message', `svc-test engines base: debootstrap ${base.suite} minbase + ${base.packages.join(',')}`,
      tarball,
      base.tag,
    ],
    logFile,
  );
}

async function buildService(b: Build, logFile: string) {
  const ctx = await mkdtemp(join(tmpdir(), 'svc-image-ctx-'));
  try {
    const src = join(IMAGES_DIR, b.dir);
    for (const f of readdirSync(src)) copyFileSync(join(src, f), join(ctx, f));
    const args = Object.entries(b.args ?? {}).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]);
    await run('docker', ['build', '--label', 'svc.test-image=true', ...args, '-t', b.tag, ctx], logFile);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/** A cross-process lock (mkdir is atomic), so concurrent callers build once. */
async function withLock<T>(lockName: string, fn: () => Promise<T>, log: Log): Promise<T> {
  const lock = join(tmpdir(), lockName);
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
export function ensureServiceImages(opts: { log?: Log; force?: boolean } = {}): Promise<EnsureResult> {
  return ensureBuilds(SERVICE_BUILDS, 'svc-test-service-images.lock', opts);
}

/**
 * The stand-ins of two majors per engine (VERSIONED_TEST_IMAGES) for upgrade tests. The first call on a
 * machine debootstraps trixie (minutes); later ones find every tag and return at once.
 */
export function ensureVersionedServiceImages(opts: { log?: Log; force?: boolean } = {}): Promise<EnsureResult> {
  return ensureBuilds(VERSIONED_BUILDS, 'svc-test-versioned-images.lock', opts);
}

async function ensureBuilds(builds: readonly Build[], lockName: string, opts: { log?: Log; force?: boolean }): Promise<EnsureResult> {
  const log = opts.log ?? defaultLog;
  const t0 = Date.now();
  const missing = async () => {
    const out: Build[] = [];
    for (const b of builds) if (opts.force || !(await imageExists(b.tag))) out.push(b);
    return out;
  };
  if ((await missing()).length === 0) {
    return { built: [], skipped: builds.map((b) => b.tag), baseBuilt: false, seconds: 0 };
  }
  return withLock(lockName, async () => {
    const todo = await missing(); // another process may have built them meanwhile
    const skipped = builds.map((b) => b.tag).filter((t) => !todo.some((b) => b.tag === t));
    if (todo.length === 0) return { built: [], skipped, baseBuilt: false, seconds: 0 };
    const logFile = join(tmpdir(), `svc-test-images-${Date.now()}.log`);
    let baseBuilt = false;
    const basesDone = new Set<Base>();
    for (const b of todo) {
      // Each base just before its first image, so a base another lock holder is making is found made.
      if (!basesDone.has(b.base) && (opts.force || !(await imageExists(b.base.tag)))) {
        await buildBase(b.base, log, logFile);
        baseBuilt = true;
      }
      basesDone.add(b.base);
      const t1 = Date.now();
      await buildService(b, logFile);
      log(`built ${b.tag} in ${seconds(t1)}`);
    }
    log(`service images ready in ${seconds(t0)} (built: ${todo.map((b) => b.tag).join(', ')})`);
    return { built: todo.map((b) => b.tag), skipped, baseBuilt, seconds: (Date.now() - t0) / 1000 };
  }, log);
}
