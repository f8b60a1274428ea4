// Per-service backups and restores (issue 33 section 3) for real: a postgres and a redis service (the
// suite's stand-ins), each backed up through the command and the service-backup reconciler (the dump taken
// in its container, gzip-compressed, copied encrypted to an S3 stand-in and verified), its data changed,
// then restored from its backup: its rows come back, a safety backup was taken first, and the other service
// is untouched. A restore into a new service makes a copy that serves the backup's rows with its own
// credentials. Reconcilers are driven pass by pass as the work queue would; everything carries
// svc.instance=<INSTANCE> and is removed in afterAll.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/crypto.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { openDb, type Db } from '../../src/store/db.js';
import { backupTargets } from '../../src/store/schema/index.js';
import { getServiceByName, openCredentials } from '../../src/store/services.js';
import { getServiceBackup, getServiceRestore, serviceBackupsOf, serviceUploadsOf } from '../../src/store/service-backups.js';
import { serviceEventsOf } from '../../src/store/service-upgrades.js';
import { createServiceReconciler } from '../../src/reconcilers/service/reconciler.js';
import { createServiceBackupReconciler } from '../../src/reconcilers/service-backup/reconciler.js';
import { serviceBackupPath } from '../../src/reconcilers/service-backup/take.js';
import { backupService, restoreService } from '../../src/desired/service-backups.js';
import { parseKey, type Key, type Reconciler } from '../../src/controller/types.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { Bus } from '../../src/controller/bus.js';
import { SERVICE_TEST_IMAGES } from '../support/service-images.js';
import { commandCtx } from '../support/commands.js';
import { startS3Standin, type S3Standin } from '../support/s3-standin.js';

const execFileP = promisify(execFile);
const INSTANCE = `test-sbk-${process.pid}`;
const NETWORK = `svc-test-sbk-${process.pid}`;
const sealer = createSealer(Buffer.alloc(32, 6));
const images = { postgres: SERVICE_TEST_IMAGES.postgres, redis: SERVICE_TEST_IMAGES.redis };

let dir: string;
let db: Db;
let runtime: Runtime;
let services: Reconciler;
let backups: Reconciler;
let s3: S3Standin;
/** Keys the commands and reconcilers enqueued, run by `drain()`. */
const queued: Key[] = [];
const enqueue = (k: Key) => void queued.push(k);

const row = (name: string) => getServiceByName(db, name)!;
const ctx = () => commandCtx(db, { enqueue, sealer, config: { dataDir: dir, images, instance: INSTANCE } as never });

/** Runs the queued keys (and what they enqueue, and their requeues) until `done`, bounded. */
async function drain(done: () => boolean, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  const later: Key[] = [];
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out; queued ${JSON.stringify([...queued, ...later])}`);
    const key = queued.shift() ?? later.shift();
    if (!key) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const { kind, name } = parseKey(key);
    const rec = kind === 'service' ? services : kind === 'service-backup' ? backups : undefined;
    if (!rec) continue;
    const r = await rec.reconcile(name);
    if (r.requeueAfterMs !== undefined) {
      if (r.requeueAfterMs > 0) await new Promise((res) => setTimeout(res, Math.min(r.requeueAfterMs!, 300)));
      if (!later.includes(key)) later.push(key);
    }
  }
}

async function psql(name: string, query: string) {
  const c = openCredentials(sealer, row(name));
  const r = await runtime.exec(row(name).containerName, ['psql', '-X', '-At', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-c', query], { env: { PGPASSWORD: c.password } });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}
async function redis(name: string, ...args: string[]) {
  const c = openCredentials(sealer, row(name));
  const r = await runtime.exec(row(name).containerName, ['redis-cli', '-h', '127.0.0.1', ...args], { env: { REDISCLI_AUTH: c.password } });
  if (r.exitCode !== 0) throw new Error(`redis-cli failed: ${r.stderr}`);
  return r.stdout.trim();
}

async function create(name: string, type: 'postgres' | 'redis') {
  const { createService } = await import('../../src/desired/services.js');
  createService(ctx(), { name, type }, 'api');
  queued.push(`service:${name}`);
  await drain(() => row(name).status === 'active');
}

async function backUp(name: string) {
  const b = backupService(ctx(), row(name).id, 'api');
  await drain(() => getServiceBackup(db, b.id)!.status !== 'running');
  const done = getServiceBackup(db, b.id)!;
  expect(done, done.error ?? '').toMatchObject({ status: 'completed', trigger: 'manual' });
  return done;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sbk-it-'));
  db = openDb(join(dir, 'svc.db'));
  runtime = createDockerRuntime({ log: silentLogger });
  s3 = await startS3Standin('svc-sbk');
  db.insert(backupTargets).values({ name: 'standin', endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: 'svc/', credentials: sealer.sealJson({ access_key: s3.accessKey, secret_key: s3.secretKey }) }).run();
  services = createServiceReconciler({ db, bus: new Bus(), runtime, sealer, log: silentLogger, now: () => Date.now(), images, enqueue, settings: { network: NETWORK, instance: INSTANCE, dataDir: dir } });
  backups = createServiceBackupReconciler({ db, runtime, sealer, log: silentLogger, dataDir: dir, enqueue, now: () => Date.now(), settings: { age: { passphrase: 'service backup test', logN: 10 }, retrySeconds: 1 } });
  await Promise.all([create('pg', 'postgres'), create('cache', 'redis')].map((p) => p));
}, 300_000);

afterAll(async () => {
  const ids = (await execFileP('docker', ['ps', '-aq', '--filter', `label=svc.instance=${INSTANCE}`])).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await execFileP('docker', ['rm', '-f', ...ids]).catch(() => {});
  await execFileP('docker', ['network', 'rm', NETWORK]).catch(() => {});
  await s3?.stop().catch(() => {});
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('per-service backup and restore', () => {
  it('backs up postgres and redis, copies them off-host, and restores each alone', async () => {
    await psql('pg', "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 300) g;");
    await redis('cache', 'set', 'a', '1');
    await redis('cache', 'set', 'b', '2');
    await redis('cache', '-n', '2', 'set', 'c', '3');

    const pgBackup = await backUp('pg');
    const cacheBackup = await backUp('cache');
    // A dump a user can load by hand: SQL for psql, an RDB for redis.
    expect(gunzipSync(readFileSync(serviceBackupPath(dir, pgBackup))).toString()).toContain('COPY public.t (id, v) FROM stdin;');
    expect(gunzipSync(readFileSync(serviceBackupPath(dir, cacheBackup))).subarray(0, 5).toString()).toBe('REDIS');
    // Copied to the target, encrypted, verified, under the service's own prefix.
    await drain(() => serviceUploadsOf(db, pgBackup.id).every((u) => u.status === 'verified') && serviceUploadsOf(db, cacheBackup.id).every((u) => u.status === 'verified'));
    const [up] = serviceUploadsOf(db, pgBackup.id);
    expect(up.key).toBe(`svc/services/pg/${pgBackup.filename}.age`);

    // The data changes after the backups.
    await psql('pg', "DELETE FROM t WHERE id > 100; INSERT INTO t VALUES (1000, 'late'); CREATE TABLE extra (x int);");
    await redis('cache', 'del', 'a');
    await redis('cache', 'set', 'later', 'x');

    // Restore postgres: its rows are back, the newer table gone, redis untouched.
    const { restore } = restoreService(ctx(), row('pg').id, { backup_id: pgBackup.id }, 'api');
    await drain(() => getServiceRestore(db, restore.id)!.status !== 'running');
    const r = getServiceRestore(db, restore.id)!;
    expect(r, r.error ?? '').toMatchObject({ status: 'completed' });
    expect(await psql('pg', "SELECT count(*) || ' ' || max(id) FROM t")).toBe('300 300');
    expect(await psql('pg', "SELECT count(*) FROM pg_tables WHERE tablename = 'extra'")).toBe('0');
    expect(getServiceBackup(db, r.safetyBackupId!)).toMatchObject({ trigger: 'safety', status: 'completed' });
    expect(await redis('cache', 'get', 'later')).toBe('x');
    expect(await redis('cache', 'exists', 'a')).toBe('0');

    // Restore redis: the keys of the backup, in each database, and nothing written since.
    const rr = restoreService(ctx(), row('cache').id, { backup_id: cacheBackup.id }, 'api').restore;
    await drain(() => getServiceRestore(db, rr.id)!.status !== 'running');
    expect(getServiceRestore(db, rr.id)!.error).toBeNull();
    expect(await redis('cache', 'get', 'a')).toBe('1');
    expect(await redis('cache', 'exists', 'later')).toBe('0');
    expect(await redis('cache', '-n', '2', 'get', 'c')).toBe('3');
    expect(await redis('cache', 'set', 'writable', 'yes')).toBe('OK'); // a primary again, not a replica
    expect(await psql('pg', 'SELECT count(*) FROM t')).toBe('300');
    expect(serviceEventsOf(db, row('cache').id).map((e) => e.kind)).toEqual(expect.arrayContaining(['restore_requested', 'restore_safety_backup', 'restore_completed']));
  }, 240_000);

  it('restores a backup into a new service: a copy with its own credentials, the source unchanged', async () => {
    const b = serviceBackupsOf(db, row('pg').id).find((x) => x.trigger === 'manual')!;
    await psql('pg', "INSERT INTO t VALUES (2000, 'only in the source')");
    const { restore, service } = restoreService(ctx(), row('pg').id, { backup_id: b.id, into: { name: 'pg-copy' } }, 'api');
    expect(service.name).toBe('pg-copy');
    queued.push('service:pg-copy');
    await drain(() => getServiceRestore(db, restore.id)!.status !== 'running');
    const r = getServiceRestore(db, restore.id)!;
    expect(r, r.error ?? '').toMatchObject({ status: 'completed', intoNew: true, safetyBackupId: null });
    expect(await psql('pg-copy', 'SELECT count(*) FROM t')).toBe('300');
    expect(await psql('pg', 'SELECT count(*) FROM t')).toBe('301');
    expect(openCredentials(sealer, row('pg-copy')).password).not.toBe(openCredentials(sealer, row('pg')).password);
    expect(existsSync(row('pg-copy').dataDir)).toBe(true);
  }, 180_000);
});
