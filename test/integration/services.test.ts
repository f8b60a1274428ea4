// Managed services against the real engine and the svc-test stand-in images: the reconciler provisions
// each type to `active`, the generated credentials really connect, data survives stop/start and a
// `docker rm -f`, credentials are not in the database file in plain text, and deletion (with and without
// purge) cleans up. Everything created carries svc.instance=test-services and is removed in afterAll.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/crypto.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { openDb, type Db } from '../../src/store/db.js';
import { services, type ServiceRow } from '../../src/store/schema/index.js';
import { openCredentials, getServiceByName } from '../../src/store/services.js';
import { createServiceReconciler } from '../../src/reconcilers/service/reconciler.js';
import type { Reconciler } from '../../src/controller/types.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../support/service-images.js';
import { s3Fetch } from '../support/s3-sign.js';
import { createService, markServiceDeleted, setDesiredRunning } from '../support/commands.js';
import { Bus } from '../../src/controller/bus.js';

const execFileP = promisify(execFile);
const INSTANCE = `test-services-${process.pid}`;
const NETWORK = `svc-test-services-${process.pid}`;
const sealer = createSealer(Buffer.alloc(32, 3));

let dir: string;
let db: Db;
let runtime: Runtime;
let rec: Reconciler;

const row = (name: string) => getServiceByName(db, name);

/** Reconciles as the work queue would (honouring requeueAfterMs, capped) until `done`, bounded. */
async function reconcileUntil(name: string, done: () => boolean, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out: ${name} is ${row(name)?.status} (${row(name)?.error ?? 'no error'})`);
    const r = await rec.reconcile(name);
    await new Promise((res) => setTimeout(res, Math.min(r.requeueAfterMs ?? 200, 500)));
  }
}
const untilStatus = (name: string, status: string) => reconcileUntil(name, () => row(name)?.status === status);

const exec = async (name: string, cmd: string[], env?: Record<string, string>) => {
  const r = await runtime.exec(`${INSTANCE}-svc-${name}`, cmd, { env });
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (${r.exitCode}): ${r.stderr}`);
  return r.stdout.trim();
};

/** Per type: write something with the generated credentials, and read it back. */
const roundTrip: Record<string, { write(name: string): Promise<void>; read(name: string): Promise<string> }> = {
  postgres: {
    async write(name) {
      const c = openCredentials(sealer, row(name)!);
      await exec(name, ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-c',
        "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'kept');"], { PGPASSWORD: c.password });
    },
    async read(name) {
      const c = openCredentials(sealer, row(name)!);
      return exec(name, ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-tA', '-c', 'SELECT body FROM notes WHERE id = 1'], { PGPASSWORD: c.password });
    },
  },
  mysql: {
    async write(name) {
      const c = openCredentials(sealer, row(name)!);
      await exec(name, ['mysql', '-h127.0.0.1', `-u${c.user}`, c.database, '-e',
        "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'kept');"], { MYSQL_PWD: c.password });
    },
    async read(name) {
      const c = openCredentials(sealer, row(name)!);
      return exec(name, ['mysql', '-h127.0.0.1', `-u${c.user}`, c.database, '-N', '-B', '-e', 'SELECT body FROM notes WHERE id = 1'], { MYSQL_PWD: c.password });
    },
  },
  redis: {
    async write(name) {
      const c = openCredentials(sealer, row(name)!);
      expect(await exec(name, ['redis-cli', '-h', '127.0.0.1', 'SET', 'note', 'kept'], { REDISCLI_AUTH: c.password })).toBe('OK');
    },
    async read(name) {
      const c = openCredentials(sealer, row(name)!);
      return exec(name, ['redis-cli', '-h', '127.0.0.1', 'GET', 'note'], { REDISCLI_AUTH: c.password });
    },
  },
  garage: {
    async write(name) {
      const res = await s3(name, 'PUT', 'kept');
      expect(res.status).toBe(200);
    },
    async read(name) {
      const res = await s3(name, 'GET');
      expect(res.status).toBe(200);
      return res.text();
    },
  },
};

/** S3 through the container's address (the host cannot resolve container names), SigV4-signed. */
async function s3(name: string, method: 'PUT' | 'GET', body?: string) {
  const c = openCredentials(sealer, row(name)!);
  const info = await runtime.inspect(`${INSTANCE}-svc-${name}`, NETWORK);
  return s3Fetch(
    { accessKeyId: c.access_key, secretAccessKey: c.secret_key, region: c.region },
    { method, url: `http://${info!.address}:3900/${c.bucket}/notes/1.txt`, body },
  );
}

beforeAll(async () => {
  await ensureServiceImages();
  dir = mkdtempSync(join(tmpdir(), 'svc-services-it-'));
  db = openDb(join(dir, 'svc.db'));
  runtime = createDockerRuntime({ log: silentLogger });
  rec = createServiceReconciler({
    db, bus: new Bus(), runtime, sealer, log: silentLogger, now: () => Date.now(),
    settings: { network: NETWORK, instance: INSTANCE, dataDir: dir },
  });
});

afterAll(async () => {
  const ids = (await execFileP('docker', ['ps', '-aq', '--filter', `label=svc.instance=${INSTANCE}`])).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await execFileP('docker', ['rm', '-f', ...ids]).catch(() => {});
  await execFileP('docker', ['network', 'rm', NETWORK]).catch(() => {});
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(['postgres', 'mysql', 'redis', 'garage'] as const)('%s service', (type) => {
  const name = `it-${type}`;

  it('provisions to active; the generated credentials connect', async () => {
    createService(db, sealer, () => {}, { dataDir: dir, images: SERVICE_TEST_IMAGES, instance: INSTANCE }, { name, type });
    await untilStatus(name, 'active');
    const info = await runtime.inspect(`${INSTANCE}-svc-${name}`, NETWORK);
    expect(info).toMatchObject({ running: true, labels: { 'svc.managed': 'true', 'svc.instance': INSTANCE, 'svc.role': 'service', 'svc.service': name } });
    if (type === 'garage') expect(openCredentials(sealer, row(name)!).access_key).toMatch(/^GK/);
    await roundTrip[type].write(name);
    expect(await roundTrip[type].read(name)).toBe('kept');
  });

  it('stop and start keep the data', async () => {
    setDesiredRunning(db, () => {}, row(name)!, false);
    await untilStatus(name, 'stopped');
    expect((await runtime.inspect(`${INSTANCE}-svc-${name}`))?.running).toBe(false);
    setDesiredRunning(db, () => {}, row(name)!, true);
    await untilStatus(name, 'active');
    expect(await roundTrip[type].read(name)).toBe('kept');
  });

  it('a removed container (docker rm -f) comes back with the same data and credentials', async () => {
    const before = row(name)!.credentialsSealed;
    await execFileP('docker', ['rm', '-f', `${INSTANCE}-svc-${name}`]);
    await reconcileUntil(name, () => row(name)?.status !== 'active');
    await untilStatus(name, 'active');
    expect(row(name)!.credentialsSealed).toBe(before);
    expect(await roundTrip[type].read(name)).toBe('kept');
  });
});

describe('at rest and deletion', () => {
  it('no password appears in plain text in the database files', () => {
    db.$client.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = Buffer.concat(['svc.db', 'svc.db-wal'].map((f) => join(dir, f)).filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.includes('it-postgres')).toBe(true); // the file is the one with our rows
    for (const type of ['postgres', 'mysql', 'redis', 'garage']) {
      const c = openCredentials(sealer, row(`it-${type}`)!);
      for (const field of ['password', 'root_password', 'secret_key', 'admin_token', 'rpc_secret']) {
        if (c[field]) expect(bytes.includes(c[field]), `${type} ${field}`).toBe(false);
      }
    }
  });

  it('delete without purge removes container and row, keeps the data dir; with purge the data dir goes', async () => {
    const keep = row('it-redis')!;
    const wipe = row('it-postgres')!;
    markServiceDeleted(db, () => {}, keep, { purge: false, force: false });
    markServiceDeleted(db, () => {}, wipe, { purge: true, force: false });
    await reconcileUntil('it-redis', () => row('it-redis') === undefined);
    await reconcileUntil('it-postgres', () => row('it-postgres') === undefined);
    expect(await runtime.inspect(`${INSTANCE}-svc-it-redis`)).toBeUndefined();
    expect(await runtime.inspect(`${INSTANCE}-svc-it-postgres`)).toBeUndefined();
    expect(existsSync(keep.dataDir)).toBe(true);
    expect(existsSync(wipe.dataDir)).toBe(false);
  });
});
