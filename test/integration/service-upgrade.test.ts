// Guarded major upgrades (issue 33) for real: a postgres 15 stand-in (Debian bookworm's PostgreSQL 15)
// with rows in several tables carried to 17 (trixie's PostgreSQL 17) by the service reconciler, driven
// pass by pass as the work queue would. Also: a planted difference stops the upgrade and leaves the old
// one serving (and taking writes again); a revert goes back to the old container and data; a daemon that
// died in the middle of the move (its step begun, a half-loaded new side) is resumed by a fresh reconciler
// and ends verified. Redis 7 -> 8 and mysql 8.0 -> 8.4 (MariaDB 10.11 -> 11.8 stand-ins) the same way, and a
// preview's copy of a parent's data (issue 33 section 4) made by the same reconciler. Everything carries
// svc.instance=<INSTANCE> and is removed in afterAll.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/crypto.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { openDb, type Db } from '../../src/store/db.js';
import { serviceUpgrades } from '../../src/store/schema/index.js';
import { getServiceByName, openCredentials } from '../../src/store/services.js';
import { openUpgradeOf, serviceEventsOf, upgradesOf } from '../../src/store/service-upgrades.js';
import { createServiceReconciler } from '../../src/reconcilers/service/reconciler.js';
import { requestUpgradeEnd, upgradeService } from '../../src/desired/service-upgrades.js';
import type { Reconciler } from '../../src/controller/types.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { Bus } from '../../src/controller/bus.js';
import { ensureVersionedServiceImages, VERSIONED_TEST_IMAGES } from '../support/service-images.js';
import { commandCtx, createService } from '../support/commands.js';
import { kindOf } from '../../src/catalog/catalog.js';
import { askForCopy, copiesOf } from '../../src/store/service-copies.js';
import { COPY_FILE } from '../../src/reconcilers/service/copy.js';

const execFileP = promisify(execFile);
const INSTANCE = `test-upg-${process.pid}`;
const NETWORK = `svc-test-upg-${process.pid}`;
const sealer = createSealer(Buffer.alloc(32, 5));
const V = VERSIONED_TEST_IMAGES;
const images = {
  byVersion: { 'postgres:15': V.postgres['15'], 'postgres:17': V.postgres['17'], 'redis:7': V.redis['7'], 'redis:8': V.redis['8'], 'mysql:8.0': V.mysql['8.0'], 'mysql:8.4': V.mysql['8.4'] },
};

let dir: string;
let db: Db;
let runtime: Runtime;
let rec: Reconciler;

const row = (name: string) => getServiceByName(db, name)!;
const newReconciler = () =>
  createServiceReconciler({ db, bus: new Bus(), runtime, sealer, log: silentLogger, now: () => Date.now(), images, settings: { network: NETWORK, instance: INSTANCE, dataDir: dir } });
const ctx = () => commandCtx(db, { enqueue: () => {}, sealer, config: { dataDir: dir, images, instance: INSTANCE } as never });

/** Reconciles as the work queue would (honouring requeueAfterMs, capped) until `done`, bounded. */
async function reconcileUntil(name: string, done: () => boolean, timeoutMs = 180_000) {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out: ${name} ${JSON.stringify(upgradesOf(db, row(name).id)[0] ?? row(name).status)}`);
    const r = await rec.reconcile(name);
    await new Promise((res) => setTimeout(res, Math.min(r.requeueAfterMs ?? 200, 300)));
  }
}
const lastUpgrade = (name: string) => upgradesOf(db, row(name).id)[0];

/** psql in the service's live container (or another), as the service's user. */
async function sql(name: string, query: string, container = row(name).containerName) {
  const c = openCredentials(sealer, row(name));
  const r = await runtime.exec(container, ['psql', '-X', '-At', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-c', query], { env: { PGPASSWORD: c.password } });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

const SEED = `CREATE TABLE customers (id int PRIMARY KEY, name text, joined date);
INSERT INTO customers SELECT g, 'customer ' || g, date '2020-01-01' + g FROM generate_series(1, 500) g;
CREATE TABLE orders (id bigserial PRIMARY KEY, customer int REFERENCES customers, total numeric(10,2), note jsonb);
INSERT INTO orders (customer, total, note) SELECT 1 + g % 500, g * 1.25, jsonb_build_object('g', g) FROM generate_series(1, 2000) g;
CREATE SCHEMA audit; CREATE TABLE audit.log (at timestamptz DEFAULT now(), what text); INSERT INTO audit.log (what) VALUES ('one'), ('two'), (NULL);`;
const counts = (name: string, container?: string) =>
  sql(name, "SELECT (SELECT count(*) FROM customers) || ' ' || (SELECT count(*) FROM orders) || ' ' || (SELECT count(*) FROM audit.log) || ' ' || (SELECT sum(total) FROM orders)", container);

async function makeAt15(name: string) {
  createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name, type: 'postgres', version: '15' });
  await reconcileUntil(name, () => row(name).status === 'active');
  await sql(name, SEED);
  expect(await sql(name, 'SHOW server_version_num')).toMatch(/^15/);
}

beforeAll(async () => {
  await ensureVersionedServiceImages();
  dir = mkdtempSync(join(tmpdir(), 'svc-upg-it-'));
  db = openDb(join(dir, 'svc.db'));
  runtime = createDockerRuntime({ log: silentLogger });
  rec = newReconciler();
}, 900_000);

afterAll(async () => {
  const ids = (await execFileP('docker', ['ps', '-aq', '--filter', `label=svc.instance=${INSTANCE}`])).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await execFileP('docker', ['rm', '-f', ...ids]).catch(() => {});
  await execFileP('docker', ['network', 'rm', NETWORK]).catch(() => {});
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('postgres 15 -> 17', () => {
  it('carries every table across, verified, switches, keeps the old one stopped; then confirm drops it', async () => {
    await makeAt15('pg-a');
    const before = await counts('pg-a');
    const up = upgradeService(ctx(), row('pg-a').id, { version: '17' }, 'api');
    expect(up).toMatchObject({ status: 'running', step: 'backup', fromVersion: '15', toVersion: '17' });
    await reconcileUntil('pg-a', () => lastUpgrade('pg-a').step === 'kept');
    const u = lastUpgrade('pg-a');
    expect(u.status).toBe('switched');
    expect(row('pg-a')).toMatchObject({ version: '17', containerName: `${INSTANCE}-svc-pg-a-v17`, imageRef: VERSIONED_TEST_IMAGES.postgres['17'] });
    expect(await sql('pg-a', 'SHOW server_version_num')).toMatch(/^17/);
    expect(await counts('pg-a')).toBe(before);
    expect(await sql('pg-a', 'SELECT note->>\'g\' FROM orders WHERE id = 1234')).toBe('1234');
    await sql('pg-a', "INSERT INTO audit.log (what) VALUES ('written on 17')"); // takes writes
    const v = JSON.parse(u.verification!);
    expect(v).toMatchObject({ tables: 3, differences: [] });
    expect(statSync(u.backupPath!).size).toBeGreaterThan(1000);
    expect((await runtime.inspect(u.fromContainer))?.running).toBe(false); // kept, stopped
    expect(existsSync(u.fromDataDir)).toBe(true);
    const kinds = serviceEventsOf(db, row('pg-a').id).map((e) => e.kind).reverse();
    expect(kinds).toEqual(expect.arrayContaining(['upgrade_requested', 'upgrade_backup', 'upgrade_created', 'upgrade_writes_refused', 'upgrade_moved', 'upgrade_verified', 'upgrade_switched', 'upgrade_old_kept']));
    // steady: another pass changes nothing
    await rec.reconcile('pg-a');
    expect(lastUpgrade('pg-a')).toMatchObject({ status: 'switched', step: 'kept' });

    requestUpgradeEnd(ctx(), row('pg-a').id, 'confirm', 'api');
    await reconcileUntil('pg-a', () => lastUpgrade('pg-a').status === 'confirmed');
    expect(await runtime.inspect(u.fromContainer)).toBeUndefined();
    expect(existsSync(u.fromDataDir)).toBe(false);
    expect(await sql('pg-a', 'SELECT count(*) FROM audit.log')).toBe('4');
  });

  it('a planted difference stops the upgrade: the new side is removed and the old one serves and takes writes', async () => {
    await makeAt15('pg-b');
    upgradeService(ctx(), row('pg-b').id, { version: '17' }, 'api');
    await reconcileUntil('pg-b', () => lastUpgrade('pg-b').step === 'verify');
    const u = lastUpgrade('pg-b');
    await sql('pg-b', "INSERT INTO customers VALUES (9999, 'planted', NULL)", u.toContainer); // only on the new side
    await reconcileUntil('pg-b', () => lastUpgrade('pg-b').status === 'failed');
    expect(lastUpgrade('pg-b').error).toMatch(/verification found 1 difference\(s\): app\.public\.customers: 500 /);
    expect(await runtime.inspect(u.toContainer)).toBeUndefined();
    expect(existsSync(u.toDataDir)).toBe(false);
    expect(row('pg-b')).toMatchObject({ version: '15', containerName: `${INSTANCE}-svc-pg-b`, status: 'active' });
    await sql('pg-b', "INSERT INTO audit.log (what) VALUES ('writes again on 15')");
    expect(openUpgradeOf(db, row('pg-b').id)).toBeUndefined();
  });

  it('a revert goes back to the old container and its data; what was written on 17 is gone', async () => {
    await makeAt15('pg-c');
    const before = await counts('pg-c');
    upgradeService(ctx(), row('pg-c').id, { version: '17' }, 'api');
    await reconcileUntil('pg-c', () => lastUpgrade('pg-c').step === 'kept');
    const u = lastUpgrade('pg-c');
    await sql('pg-c', "INSERT INTO customers VALUES (7777, 'on 17', NULL)");
    requestUpgradeEnd(ctx(), row('pg-c').id, 'revert', 'api');
    await reconcileUntil('pg-c', () => lastUpgrade('pg-c').status === 'reverted');
    expect(row('pg-c')).toMatchObject({ version: '15', containerName: `${INSTANCE}-svc-pg-c` });
    expect(await sql('pg-c', 'SHOW server_version_num')).toMatch(/^15/);
    expect(await counts('pg-c')).toBe(before);
    await sql('pg-c', "INSERT INTO audit.log (what) VALUES ('writes on 15 again')");
    expect(await runtime.inspect(u.toContainer)).toBeUndefined();
    expect(existsSync(u.toDataDir)).toBe(false);
  });

  it('a daemon that died in the move (step begun, new side half loaded) is resumed by a new one: made again empty, verified', async () => {
    await makeAt15('pg-d');
    const before = await counts('pg-d');
    upgradeService(ctx(), row('pg-d').id, { version: '17' }, 'api');
    await reconcileUntil('pg-d', () => lastUpgrade('pg-d').step === 'move');
    const u = lastUpgrade('pg-d');
    // What a daemon killed inside the move leaves: the step's attempt counted, part of the data loaded.
    await sql('pg-d', 'CREATE TABLE customers (id int PRIMARY KEY, name text, joined date); INSERT INTO customers VALUES (1, \'half\', NULL)', u.toContainer);
    db.update(serviceUpgrades).set({ attempts: 1 }).where(eq(serviceUpgrades.id, u.id)).run();
    rec = newReconciler(); // the next daemon
    await reconcileUntil('pg-d', () => lastUpgrade('pg-d').step === 'kept');
    expect(serviceEventsOf(db, row('pg-d').id).map((e) => e.kind)).toContain('upgrade_move_restarted');
    expect(await counts('pg-d')).toBe(before);
    expect(JSON.parse(lastUpgrade('pg-d').verification!).differences).toEqual([]);
  });
});

/** redis-cli in the service's live container (or another), with its password; the answer, trimmed. */
async function redis(name: string, args: string[], container = row(name).containerName) {
  const c = openCredentials(sealer, row(name));
  const r = await runtime.exec(container, ['redis-cli', ...args], { env: { REDISCLI_AUTH: c.password } });
  if (r.exitCode !== 0) throw new Error(`redis-cli failed: ${r.stderr}`);
  return r.stdout.trim();
}

describe('redis 7 -> 8', () => {
  it('carries every key of every database across (RDB by replication), refusing writes on 7 during the move; a revert goes back', async () => {
    const name = 'rd-a';
    createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name, type: 'redis', version: '7' });
    await reconcileUntil(name, () => row(name).status === 'active');
    expect(await redis(name, ['INFO', 'server'])).toMatch(/redis_version:7\./);
    const c = openCredentials(sealer, row(name));
    const seeded = await runtime.exec(row(name).containerName, ['sh', '-c', 'for i in $(seq 0 299); do echo "SET k$i v$i"; done | redis-cli >/dev/null'], { env: { REDISCLI_AUTH: c.password } });
    expect(seeded.exitCode).toBe(0);
    await redis(name, ['HSET', 'h', 'a', '1', 'b', '2']);
    await redis(name, ['ZADD', 'z', '0.1', 'm', '2', 'n']);
    await redis(name, ['SADD', 's', 'x', 'y']);
    await redis(name, ['RPUSH', 'l', '1', '2', '3']);
    await redis(name, ['-n', '3', 'SET', 'other', 'db']);
    upgradeService(ctx(), row(name).id, { version: '8' }, 'api');
    await reconcileUntil(name, () => lastUpgrade(name).step === 'move');
    expect(await redis(name, ['SET', 'during', 'move'], lastUpgrade(name).fromContainer)).toMatch(/NOREPLICAS/); // refused
    expect(await redis(name, ['GET', 'k7'], lastUpgrade(name).fromContainer)).toBe('v7'); // read
    await reconcileUntil(name, () => lastUpgrade(name).step === 'kept');
    const u = lastUpgrade(name);
    expect(u.backupPath).toMatch(/\.rdb\.gz$/);
    expect(statSync(u.backupPath!).size).toBeGreaterThan(100);
    expect(row(name)).toMatchObject({ version: '8', containerName: `${INSTANCE}-svc-${name}-v8` });
    expect(await redis(name, ['INFO', 'server'])).toMatch(/redis_version:8\./);
    expect(await redis(name, ['DBSIZE'])).toBe('304');
    expect(await redis(name, ['-n', '3', 'GET', 'other'])).toBe('db');
    expect(await redis(name, ['SET', 'on8', 'yes'])).toBe('OK'); // takes writes
    expect(JSON.parse(u.verification!)).toMatchObject({ databases: 2, tables: 2, differences: [] });

    requestUpgradeEnd(ctx(), row(name).id, 'revert', 'api');
    await reconcileUntil(name, () => lastUpgrade(name).status === 'reverted');
    expect(row(name)).toMatchObject({ version: '7', containerName: `${INSTANCE}-svc-${name}` });
    expect(await redis(name, ['DBSIZE'])).toBe('304');
    expect(await redis(name, ['GET', 'on8'])).toBe('');
    expect(await redis(name, ['SET', 'on7', 'again'])).toBe('OK'); // writes again
    expect(await runtime.inspect(u.toContainer)).toBeUndefined();
  });
});

/** mysql as root in the service's live container (or another); tab-separated rows. */
async function mysql(name: string, query: string, container = row(name).containerName, user: 'root' | 'app' = 'root') {
  const c = openCredentials(sealer, row(name));
  const who = user === 'root' ? ['-uroot'] : [`-u${c.user}`];
  const r = await runtime.exec(container, ['mysql', ...who, '-h127.0.0.1', '-N', '-B', '-D', c.database, '-e', query], { env: { MYSQL_PWD: user === 'root' ? c.root_password : c.password } });
  if (r.exitCode !== 0) throw new Error(`mysql failed: ${r.stderr}`);
  return r.stdout.trim();
}
const MYSQL_SEED = `CREATE TABLE customers (id int PRIMARY KEY, name varchar(100), joined date, score double, note text);
INSERT INTO customers VALUES ${Array.from({ length: 400 }, (_, i) => `(${i + 1}, 'customer ${i + 1}', '2020-01-01' + INTERVAL ${i} DAY, ${i} / 7, ${i % 3 ? "'x'" : 'NULL'})`).join(', ')};
CREATE TABLE orders (id bigint AUTO_INCREMENT PRIMARY KEY, customer int, total decimal(10,2), FOREIGN KEY (customer) REFERENCES customers (id));
INSERT INTO orders (customer, total) SELECT id, id * 1.25 FROM customers; INSERT INTO orders (customer, total) SELECT id, id * 2 FROM customers;
CREATE TABLE \`odd name\` (a int, b varchar(10)); INSERT INTO \`odd name\` VALUES (1, NULL), (NULL, '1'), (2, '');`;
const mysqlCounts = (name: string, container?: string) =>
  mysql(name, 'SELECT (SELECT count(*) FROM customers), (SELECT count(*) FROM orders), (SELECT sum(total) FROM orders), (SELECT count(*) FROM `odd name`)', container);

async function mysqlAt80(name: string) {
  createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name, type: 'mysql', version: '8.0' });
  await reconcileUntil(name, () => row(name).status === 'active');
  await mysql(name, MYSQL_SEED, undefined, 'app');
}

describe('mysql 8.0 -> 8.4 (MariaDB 10.11 -> 11.8 stand-ins)', () => {
  it('dumps and loads every table, verified per table, refusing the app user writes on 8.0 during the move; confirm drops 8.0', async () => {
    const name = 'my-a';
    await mysqlAt80(name);
    const before = await mysqlCounts(name);
    upgradeService(ctx(), row(name).id, { version: '8.4' }, 'api');
    await reconcileUntil(name, () => lastUpgrade(name).step === 'move');
    await expect(mysql(name, 'INSERT INTO orders (customer, total) VALUES (1, 1)', lastUpgrade(name).fromContainer, 'app')).rejects.toThrow(/read-only|read_only/);
    await reconcileUntil(name, () => lastUpgrade(name).step === 'kept');
    const u = lastUpgrade(name);
    expect(row(name)).toMatchObject({ version: '8.4', containerName: `${INSTANCE}-svc-${name}-v8_4` });
    expect(await mysql(name, 'SELECT version()')).toMatch(/^11\.8/);
    expect(await mysqlCounts(name)).toBe(before);
    expect(JSON.parse(u.verification!)).toMatchObject({ databases: 1, tables: 3, differences: [] });
    await mysql(name, 'INSERT INTO orders (customer, total) VALUES (1, 1)', undefined, 'app'); // the app's user writes on 8.4
    requestUpgradeEnd(ctx(), row(name).id, 'confirm', 'api');
    await reconcileUntil(name, () => lastUpgrade(name).status === 'confirmed');
    expect(await runtime.inspect(u.fromContainer)).toBeUndefined();
    expect(existsSync(u.fromDataDir)).toBe(false);
  });

  it('the per-table checksum sees a changed value with the same row count (the rollback path is the one postgres takes above)', async () => {
    const name = 'my-b';
    await mysqlAt80(name);
    const c = openCredentials(sealer, row(name));
    const sums = async () => {
      const cmd = kindOf('mysql').upgrade!.tableSums(c, c.database);
      const r = await runtime.exec(row(name).containerName, cmd.cmd, { env: cmd.env });
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    };
    const before = await sums();
    expect(before.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['customers 400', 'odd_name 3', 'orders 800']);
    await mysql(name, "UPDATE customers SET name = 'changed' WHERE id = 200");
    const changed = await sums();
    expect(changed[0]).toMatch(/^customers 400 /);
    expect(changed[0]).not.toBe(before[0]);
    expect(changed.slice(1)).toEqual(before.slice(1));
    await mysql(name, "UPDATE customers SET name = 'customer 200' WHERE id = 200");
    expect(await sums()).toEqual(before);
    await mysql(name, "UPDATE `odd name` SET b = '' WHERE b IS NULL"); // NULL and '' differ
    expect((await sums())[1]).not.toBe(before[1]);
  });
});

describe("a preview's copy of its parent's data (previews.services: copy)", () => {
  it('is loaded before the copy is active, with its own credentials and no file of the parent; over the limit it stays empty and says so', async () => {
    await makeAt15('pg-parent');
    const before = await counts('pg-parent');
    createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name: 'pg-copy', type: 'postgres', version: '15' });
    askForCopy(db, row('pg-copy').id, row('pg-parent').id);
    createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name: 'pg-big', type: 'postgres', version: '15' });
    askForCopy(db, row('pg-big').id, row('pg-parent').id, 1000);
    await reconcileUntil('pg-copy', () => row('pg-copy').status === 'active');
    expect(copiesOf(db, row('pg-copy').id)[0]).toMatchObject({ status: 'done', error: null });
    expect(await counts('pg-copy')).toBe(before); // the copy's own password still opens it
    expect(openCredentials(sealer, row('pg-copy')).password).not.toBe(openCredentials(sealer, row('pg-parent')).password);
    await sql('pg-copy', "INSERT INTO audit.log (what) VALUES ('only in the copy')");
    expect(await counts('pg-parent')).toBe(before);
    expect(existsSync(join(row('pg-copy').dataDir, COPY_FILE))).toBe(false);
    expect(existsSync(join(row('pg-parent').dataDir, COPY_FILE))).toBe(false);
    expect(serviceEventsOf(db, row('pg-copy').id).map((e) => e.kind)).toContain('copy_done');

    await reconcileUntil('pg-big', () => row('pg-big').status === 'active');
    expect(copiesOf(db, row('pg-big').id)[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/over the copy limit of 0\.0 MB/) });
    expect(await sql('pg-big', "SELECT count(*) FROM pg_tables WHERE tablename = 'customers'")).toBe('0');
  });

  it('redis: the copy replicates once from the parent and keeps its own password', async () => {
    createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name: 'rd-parent', type: 'redis', version: '7' });
    await reconcileUntil('rd-parent', () => row('rd-parent').status === 'active');
    await redis('rd-parent', ['SET', 'k', 'from the parent']);
    await redis('rd-parent', ['-n', '2', 'HSET', 'h', 'a', '1']);
    createService(db, sealer, () => {}, { dataDir: dir, images, instance: INSTANCE }, { name: 'rd-copy', type: 'redis', version: '7' });
    askForCopy(db, row('rd-copy').id, row('rd-parent').id);
    await reconcileUntil('rd-copy', () => row('rd-copy').status === 'active');
    expect(copiesOf(db, row('rd-copy').id)[0]).toMatchObject({ status: 'done', error: null });
    expect(await redis('rd-copy', ['GET', 'k'])).toBe('from the parent');
    expect(await redis('rd-copy', ['-n', '2', 'HGET', 'h', 'a'])).toBe('1');
    expect(await redis('rd-copy', ['SET', 'k', 'only in the copy'])).toBe('OK'); // a primary, not a replica
    expect(await redis('rd-parent', ['GET', 'k'])).toBe('from the parent');
    expect(await redis('rd-copy', ['CONFIG', 'GET', 'masterauth'])).not.toContain(openCredentials(sealer, row('rd-parent')).password);
  });
});
