// Guarded major upgrades (issue 33) for real: a postgres 15 stand-in (Debian bookworm's PostgreSQL 15)
// with rows in several tables carried to 17 (trixie's PostgreSQL 17) by the service reconciler, driven
// pass by pass as the work queue would. Also: a planted difference stops the upgrade and leaves the old
// one serving (and taking writes again); a revert goes back to the old container and data; a daemon that
// died in the middle of the move (its step begun, a half-loaded new side) is resumed by a fresh reconciler
// and ends verified. Everything carries svc.instance=<INSTANCE> and is removed in afterAll.
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

const execFileP = promisify(execFile);
const INSTANCE = `test-upg-${process.pid}`;
const NETWORK = `svc-test-upg-${process.pid}`;
const sealer = createSealer(Buffer.alloc(32, 5));
const images = { byVersion: { 'postgres:15': VERSIONED_TEST_IMAGES.postgres['15'], 'postgres:17': VERSIONED_TEST_IMAGES.postgres['17'] } };

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
