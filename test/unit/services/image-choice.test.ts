// The image of a service explains itself (issue 18, section 3): a pull failure names SVC_IMAGE_<TYPE>; a
// service that never became active takes the configured image at its next attempt; an active one keeps its.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { services, type ServiceRow } from '../../../src/store/schema/index.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import type { Db } from '../../../src/store/db.js';
import { createService } from '../../support/commands.js';
import { Bus } from '../../../src/controller/bus.js';
import { getServiceByName } from '../../../src/store/services.js';

const sealer = testSealer();
const enqueue = recordingEnqueue();
let db: Db;
let dir: string;
let rt: FakeRuntime;
let now: number;

const row = (name: string) => getServiceByName(db, name)!;
/** The daemon as started with these `SVC_IMAGE_*` values. */
const daemonWith = (postgres: string) =>
  createServiceReconciler({
    db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now,
    images: { postgres, mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' },
    settings: { network: 'svc-unit', instance: 'svc', dataDir: dir },
    tcpOpen: async () => true,
  });
const make = (postgres: string) =>
  createService(db, sealer, enqueue, { dataDir: dir, images: { postgres, mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' }, instance: 'svc' }, { name: 'db', type: 'postgres' });

beforeEach(() => {
  db = memoryDb();
  dir = mkdtempSync(join(tmpdir(), 'svc-img-'));
  rt = new FakeRuntime({ images: ['pg:16', 'pg:17'] });
  rt.execHandler = () => ({ exitCode: 0, stdout: '', stderr: '' });
  now = Date.parse('2026-01-01T00:00:00Z');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function untilActive(rec: ReturnType<typeof daemonWith>) {
  for (let i = 0; i < 10 && row('db').status !== 'active'; i++) await rec.reconcile('db');
  expect(row('db').status).toBe('active');
}

describe('service image', () => {
  it('a pull failure names the variable that sets the image', async () => {
    rt.pullFailures.set('postgres:nope', 'pull access denied for postgres, repository does not exist');
    make('postgres:nope');
    await daemonWith('postgres:nope').reconcile('db');
    expect(row('db').status).toBe('error');
    expect(row('db').error).toContain('pull access denied');
    expect(row('db').error).toContain('SVC_IMAGE_POSTGRES');
  });

  it('a service that never became active takes the configured image at its next attempt', async () => {
    rt.pullFailures.set('postgres:nope', 'pull access denied');
    make('postgres:nope');
    await daemonWith('postgres:nope').reconcile('db');
    expect(row('db').status).toBe('error');
    const fixed = daemonWith('pg:16'); // SVC_IMAGE_POSTGRES corrected, daemon restarted
    now += 10 * 60_000;
    await untilActive(fixed);
    expect(row('db').imageRef).toBe('pg:16');
    expect(rt.containers.get('svc-svc-db')!.spec.image).toBe('pg:16');
    expect(row('db').activatedAt).not.toBeNull();
    const calls = rt.calls.length;
    await fixed.reconcile('db');
    expect(rt.calls.filter((c) => c.method !== 'list' && c.method !== 'inspect').length).toBe(rt.calls.slice(0, calls).filter((c) => c.method !== 'list' && c.method !== 'inspect').length);
  });

  it('an active service keeps its image when the variable changes, even when its container is recreated', async () => {
    make('pg:16');
    await untilActive(daemonWith('pg:16'));
    const upgraded = daemonWith('pg:17');
    await rt.remove('svc-svc-db');
    now += 60_000;
    await upgraded.reconcile('db');
    await untilActive(upgraded);
    expect(rt.callsOf('run')).toHaveLength(2);
    expect(row('db').imageRef).toBe('pg:16');
    expect(rt.containers.get('svc-svc-db')!.spec.image).toBe('pg:16');
  });
});

describe('service versions (issue 33)', () => {
  const withVersions = (byVersion: Record<string, string>, postgres?: string) =>
    createServiceReconciler({
      db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now,
      images: { postgres, byVersion },
      settings: { network: 'svc-unit', instance: 'svc', dataDir: dir },
      tcpOpen: async () => true,
    });
  const makeAt = (version: string | undefined, images: { postgres?: string; byVersion?: Record<string, string> }) =>
    createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name: 'db', type: 'postgres', ...(version ? { version } : {}) });

  it('a service is created at the newest version by default, its image the official one of it', () => {
    makeAt(undefined, {});
    expect(row('db')).toMatchObject({ version: '18', imageRef: 'postgres:18' });
  });

  it('SVC_IMAGE_POSTGRES_17 wins over SVC_IMAGE_POSTGRES for a 17; the type-wide variable serves the other versions', () => {
    makeAt('17', { postgres: 'pg:any', byVersion: { 'postgres:17': 'pg:17' } });
    expect(row('db')).toMatchObject({ version: '17', imageRef: 'pg:17' });
    db.delete(services).run();
    makeAt('16', { postgres: 'pg:any', byVersion: { 'postgres:17': 'pg:17' } });
    expect(row('db')).toMatchObject({ version: '16', imageRef: 'pg:any' });
  });

  it('a version svc does not offer is a 400 naming the versions, and nothing is written', () => {
    expect(() => makeAt('14', {})).toThrow(/15, 16, 17, 18/);
    expect(db.select().from(services).all()).toEqual([]);
  });

  it('a newer image of the same version (SVC_IMAGE_POSTGRES_17 changed) is a restart on the same data directory', async () => {
    rt = new FakeRuntime({ images: ['pg:17.1', 'pg:17.2'] });
    rt.execHandler = () => ({ exitCode: 0, stdout: '', stderr: '' });
    makeAt('17', { byVersion: { 'postgres:17': 'pg:17.1' } });
    await untilActive(withVersions({ 'postgres:17': 'pg:17.1' }));
    const before = rt.containers.get('svc-svc-db')!.spec;
    const minor = withVersions({ 'postgres:17': 'pg:17.2' });
    await minor.reconcile('db');
    await untilActive(minor);
    expect(row('db').imageRef).toBe('pg:17.2');
    const after = rt.containers.get('svc-svc-db')!.spec;
    expect(after.image).toBe('pg:17.2');
    expect(after.mounts).toEqual(before.mounts);
    expect(rt.callsOf('run')).toHaveLength(2);
    const runs = rt.callsOf('run').length;
    await minor.reconcile('db');
    expect(rt.callsOf('run')).toHaveLength(runs); // converged
  });

  it('a changed type-wide SVC_IMAGE_POSTGRES does not move an active service (it may be another major)', async () => {
    makeAt('17', { postgres: 'pg:16' });
    await untilActive(withVersions({}, 'pg:16'));
    await untilActive(withVersions({}, 'pg:17'));
    await withVersions({}, 'pg:17').reconcile('db');
    expect(row('db').imageRef).toBe('pg:16');
    expect(rt.callsOf('run')).toHaveLength(1);
  });
});
