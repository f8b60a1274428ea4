// Steady state of the service reconciler (DESIGN.md rule 2): once a service has converged — active,
// stopped, healed, failed and waiting out its backoff, deleted — reconciling it again makes no engine call
// that changes anything, writes no row (not even the same values) and calls no admin API.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { dbState } from '../../support/db-snapshot.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { services, type ServiceRow } from '../../../src/store/schema/index.js';
import { openCredentials, getServiceByName } from '../../../src/store/services.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import type { Reconciler, Result } from '../../../src/controller/types.js';
import type { Db } from '../../../src/store/db.js';
import { fakeGarage } from './fake-garage.js';
import { createService, markServiceDeleted, setDesiredRunning } from '../../support/commands.js';
import { Bus } from '../../../src/controller/bus.js';

const images = { postgres: 'pg:16', mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' };
/** Runtime methods that only look. */
const READS = new Set(['list', 'inspect', 'ping', 'hasImage', 'listImageTags']);
let db: Db;
let dir: string;
let rt: FakeRuntime;
let now: number;
let rec: Reconciler;
let garage: ReturnType<typeof fakeGarage> | undefined;
const sealer = testSealer();
const enqueue = recordingEnqueue();

const row = (name: string) => getServiceByName(db, name);
const make = (name: string, type: string) => createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name, type });
async function until(name: string, status: string | undefined, max = 30) {
  for (let i = 0; i < max; i++) {
    if (row(name)?.status === status) return;
    await rec.reconcile(name);
  }
  throw new Error(`${name} never reached ${status}; is ${row(name)?.status} (${row(name)?.error})`);
}

/**
 * Reconciles `name` twice more and asserts nothing changed: same answer both times, only reading engine
 * calls, no admin API call, the database byte for byte the same with no write at all.
 */
async function expectSteady(name: string): Promise<Result> {
  const before = dbState(db);
  const calls = rt.calls.length;
  const garageCalls = garage?.state.calls.length ?? 0;
  const containers = JSON.stringify([...rt.containers.values()].map((c) => [c.id, c.state, c.startedAt]));
  const first = await rec.reconcile(name);
  const second = await rec.reconcile(name);
  expect(second).toEqual(first);
  expect(rt.calls.slice(calls).map((c) => c.method).filter((m) => !READS.has(m))).toEqual([]);
  expect(garage?.state.calls.length ?? 0).toBe(garageCalls);
  expect(JSON.stringify([...rt.containers.values()].map((c) => [c.id, c.state, c.startedAt]))).toBe(containers);
  expect(dbState(db)).toEqual(before);
  return first;
}

beforeEach(() => {
  db = memoryDb();
  dir = mkdtempSync(join(tmpdir(), 'svc-steady-'));
  rt = new FakeRuntime({ images: Object.values(images), now: () => now });
  now = Date.parse('2026-01-01T00:00:00Z');
  garage = undefined;
  rt.execHandler = () => ({ exitCode: 0, stdout: 'PONG\n', stderr: '' });
  rec = createServiceReconciler({
    db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now,
    settings: { network: 'svc-unit', instance: 'svc', dataDir: dir },
    httpGet: async () => 200,
    tcpOpen: async () => true,
    fetch: (url, init) => garage!.fetch(url, init),
  });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('service reconciler steady state', () => {
  it.each(['postgres', 'mysql', 'redis'])('an active %s service: nothing changes', async (type) => {
    make('s', type);
    await until('s', 'active');
    expect(await expectSteady('s')).toEqual({});
  });

  it('an active, provisioned garage service: no admin call, no credentials rewritten', async () => {
    make('files', 'garage');
    garage = fakeGarage(openCredentials(sealer, row('files')!).admin_token);
    await until('files', 'active');
    expect(garage.state.calls.length).toBeGreaterThan(0);
    expect(await expectSteady('files')).toEqual({});
  });

  it('a stopped service: the stopped container is neither started nor stopped again', async () => {
    make('c', 'redis');
    await until('c', 'active');
    setDesiredRunning(db, enqueue, row('c')!, false);
    await until('c', 'stopped');
    expect(await expectSteady('c')).toEqual({});
  });

  it('a healed service: steady while the heal counter waits to reset, then one reset, then steady', async () => {
    make('db', 'postgres');
    await until('db', 'active');
    rt.kill('svc-svc-db');
    await rec.reconcile('db');
    await until('db', 'active');
    expect(row('db')!.healFailures).toBe(1);
    expect((await expectSteady('db')).requeueAfterMs).toBeGreaterThan(0);
    now += 60_000;
    await rec.reconcile('db');
    expect(row('db')).toMatchObject({ healFailures: 0, healNotBefore: null });
    expect(await expectSteady('db')).toEqual({});
  });

  it('a failed service inside its backoff: no retry and no write before the backoff ends', async () => {
    rt.images.delete('pg:16');
    rt.pullFailures.set('pg:16', 'pull access denied for pg');
    make('bad', 'postgres');
    await rec.reconcile('bad');
    expect(row('bad')).toMatchObject({ status: 'error', healFailures: 1 });
    expect(await expectSteady('bad')).toEqual({ requeueAfterMs: 10_000 });
  });

  it('a deleted service: once the row is gone, nothing is removed twice', async () => {
    make('gone', 'redis');
    await until('gone', 'active');
    markServiceDeleted(db, enqueue, row('gone')!, { purge: true, force: false });
    await until('gone', undefined);
    expect(await expectSteady('gone')).toEqual({});
  });
});
