// The service's observed state (src/observed/services.ts): written only where it differs, created on the first
// write, skipped for a service gone meanwhile, gone with its service; and the service reconciler writes it
// and never the spec row (services), which only the services command writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { Bus } from '../../../src/controller/bus.js';
import { observeService, readServiceObserved } from '../../../src/observed/services.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import { services, serviceStatus } from '../../../src/store/schema/index.js';
import { getServiceByName } from '../../../src/store/services.js';
import type { Db } from '../../../src/store/db.js';
import { createService, markServiceDeleted, setDesiredRunning } from '../../support/commands.js';
import { fakeGarage } from './fake-garage.js';
import { openCredentials, sealMissingGarageKeys } from '../../../src/store/services.js';

const images = { postgres: 'pg:16', mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' };
const sealer = testSealer();
const enqueue = recordingEnqueue();
let db: Db;
let dir: string;
beforeEach(() => {
  db = memoryDb();
  dir = mkdtempSync(join(tmpdir(), 'svc-observed-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const make = (name: string, type = 'redis') => createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name, type });
const statusRow = (id: number) => db.select().from(serviceStatus).where(eq(serviceStatus.serviceId, id)).get();
const specRow = (name: string) => db.select().from(services).where(eq(services.name, name)).get();

describe('observeService', () => {
  it('creates the row on the first write, then writes only what differs', () => {
    const s = make('c');
    expect(statusRow(s.id)).toBeUndefined();
    expect(readServiceObserved(db, s.id)).toMatchObject({ status: 'pending', healFailures: 0, containerId: null });
    expect(observeService(db, s.id, { status: 'provisioning', containerId: 'abc' })).toEqual({ status: 'provisioning', containerId: 'abc' });
    db.update(serviceStatus).set({ updatedAt: '2000-01-01T00:00:00Z' }).where(eq(serviceStatus.serviceId, s.id)).run();
    expect(observeService(db, s.id, { status: 'provisioning', containerId: 'abc', error: undefined })).toEqual({});
    expect(statusRow(s.id)!.updatedAt).toBe('2000-01-01T00:00:00Z'); // no no-op write (rule 7)
    expect(observeService(db, s.id, { status: 'active', containerId: 'abc' })).toEqual({ status: 'active' });
    expect(statusRow(s.id)).toMatchObject({ status: 'active', containerId: 'abc' });
  });

  it('runs onWrite with the facts before, in the same transaction, only when something changed', () => {
    const s = make('c');
    const seen: string[] = [];
    observeService(db, s.id, { status: 'error', error: 'x' }, (before, diff) => seen.push(`${before.status}->${diff.status}`));
    observeService(db, s.id, { status: 'error', error: 'x' }, () => seen.push('again'));
    expect(seen).toEqual(['pending->error']);
  });

  it('skips a service deleted meanwhile, and goes with its service', () => {
    expect(observeService(db, 999, { status: 'active' })).toEqual({});
    expect(db.select().from(serviceStatus).all()).toEqual([]);
    const s = make('c');
    observeService(db, s.id, { status: 'active' });
    db.delete(services).where(eq(services.id, s.id)).run();
    expect(statusRow(s.id)).toBeUndefined();
  });
});

describe('the service reconciler writes observed state only', () => {
  it('a whole life (create, active, heal, stop, start, delete) leaves the spec row as the commands wrote it', async () => {
    const rt = new FakeRuntime({ images: Object.values(images) });
    rt.execHandler = () => ({ exitCode: 0, stdout: 'PONG\n', stderr: '' });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const rec = createServiceReconciler({
      db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now, settings: { network: 'n', instance: 'svc', dataDir: dir },
      httpGet: async () => 200, tcpOpen: async () => true, images,
    });
    const drive = async (name: string, want: string) => {
      for (let i = 0; i < 20 && getServiceByName(db, name)?.status !== want; i++) await rec.reconcile(name);
      expect(getServiceByName(db, name)?.status).toBe(want);
    };
    const s = make('c');
    let spec = specRow('c');
    await drive('c', 'active');
    expect(specRow('c')).toEqual(spec);
    expect(statusRow(s.id)).toMatchObject({ status: 'active', containerId: expect.any(String), imageRef: 'redis:7', activatedAt: expect.any(String) });
    rt.kill('svc-svc-c');
    await rec.reconcile('c');
    await drive('c', 'active');
    expect(statusRow(s.id)!.healFailures).toBe(1);
    expect(specRow('c')).toEqual(spec);
    setDesiredRunning(db, enqueue, getServiceByName(db, 'c')!, false);
    spec = specRow('c');
    await drive('c', 'stopped');
    setDesiredRunning(db, enqueue, getServiceByName(db, 'c')!, true);
    spec = specRow('c');
    await drive('c', 'active');
    expect(specRow('c')).toEqual(spec);
    now += 1;
    markServiceDeleted(db, enqueue, getServiceByName(db, 'c')!, { purge: true, force: false });
    for (let i = 0; i < 5; i++) await rec.reconcile('c');
    expect(specRow('c')).toBeUndefined(); // the command's forgetDeletedService dropped it once cleaned up
    expect(statusRow(s.id)).toBeUndefined();
  });

  it('a start the user asks for forgets the backoff of earlier failures, once', async () => {
    const rt = new FakeRuntime({ images: Object.values(images) });
    rt.execHandler = () => ({ exitCode: 0, stdout: 'PONG\n', stderr: '' });
    const now = Date.parse('2026-01-01T00:00:00Z');
    const rec = createServiceReconciler({ db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now, settings: { network: 'n', instance: 'svc', dataDir: dir }, httpGet: async () => 200, tcpOpen: async () => true });
    const s = make('loop');
    for (let i = 0; i < 10 && getServiceByName(db, 'loop')?.status !== 'active'; i++) await rec.reconcile('loop');
    rt.kill('svc-svc-loop');
    await rec.reconcile('loop'); // restart 1, immediate
    for (let i = 0; i < 10 && getServiceByName(db, 'loop')?.status !== 'active'; i++) await rec.reconcile('loop');
    rt.kill('svc-svc-loop');
    expect(await rec.reconcile('loop')).toEqual({ requeueAfterMs: 10_000 }); // in its backoff
    const starts = rt.callsOf('start').length;
    setDesiredRunning(db, enqueue, getServiceByName(db, 'loop')!, true);
    await rec.reconcile('loop');
    expect(rt.callsOf('start')).toHaveLength(starts + 1); // at once, not after the backoff
    // Counted from zero again (the crash it restarts from is one), as when the command reset the counter.
    expect(statusRow(s.id)).toMatchObject({ healFailures: 1, startSeenAt: specRow('loop')!.startRequestedAt });
    for (let i = 0; i < 10 && getServiceByName(db, 'loop')?.status !== 'active'; i++) await rec.reconcile('loop');
    rt.kill('svc-svc-loop');
    expect(await rec.reconcile('loop')).toEqual({ requeueAfterMs: 10_000 }); // the request was used up: backoff again
  });

  it('garage: the key generated with the credentials is imported; the credentials are never rewritten', async () => {
    const rt = new FakeRuntime({ images: Object.values(images) });
    const s = make('files', 'garage');
    const sealed = specRow('files')!.credentialsSealed;
    const creds = openCredentials(sealer, specRow('files')!);
    const garage = fakeGarage(creds.admin_token);
    const rec = createServiceReconciler({
      db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => Date.now(), settings: { network: 'n', instance: 'svc', dataDir: dir },
      httpGet: async () => 200, tcpOpen: async () => true, fetch: garage.fetch,
    });
    for (let i = 0; i < 10 && getServiceByName(db, 'files')?.status !== 'active'; i++) await rec.reconcile('files');
    expect(getServiceByName(db, 'files')?.status).toBe('active');
    expect(garage.state.keys).toEqual([{ id: creds.access_key, name: creds.key_name, secret: creds.secret_key }]);
    expect(specRow('files')!.credentialsSealed).toBe(sealed);
    expect(statusRow(s.id)!.provisionedAt).not.toBeNull();
  });
});

describe('sealMissingGarageKeys', () => {
  it('gives a Garage service of an older svc (empty key, to be filled by provisioning then) a key of its own, once', () => {
    const s = make('files', 'garage');
    const old = { ...openCredentials(sealer, specRow('files')!), access_key: '', secret_key: '' };
    db.update(services).set({ credentialsSealed: sealer.sealJson(old) }).where(eq(services.id, s.id)).run();
    make('cache', 'redis');
    expect(sealMissingGarageKeys(db, sealer)).toBe(1);
    const now = openCredentials(sealer, specRow('files')!);
    expect(now).toMatchObject({ ...old, access_key: expect.stringMatching(/^GK[0-9a-f]{24}$/), secret_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(sealMissingGarageKeys(db, sealer)).toBe(0);
    expect(openCredentials(sealer, specRow('files')!)).toEqual(now);
  });
});
