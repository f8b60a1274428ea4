import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { services, type ServiceRow } from '../../../src/store/schema/index.js';
import { openCredentials, getServiceByName } from '../../../src/store/services.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import type { Reconciler } from '../../../src/controller/types.js';
import type { Db } from '../../../src/store/db.js';
import { fakeGarage } from './fake-garage.js';
import { commandCtx, createService, markServiceDeleted, setDesiredRunning } from '../../support/commands.js';
import { createChannel } from '../../../src/desired/notify.js';
import { listOutbox } from '../../../src/store/notify.js';
import { Bus } from '../../../src/controller/bus.js';

const images = { postgres: 'pg:16', mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' };
const settings = { network: 'svc-unit', instance: 'svc' };
let db: Db;
let dir: string;
let rt: FakeRuntime;
let now: number;
let rec: Reconciler;
let garage: ReturnType<typeof fakeGarage> | undefined;
let ready: boolean;
/** Whether the readiness gate's TCP connect succeeds. */
let portOpen: boolean;
let httpStatus: number | undefined;
const sealer = testSealer();
const enqueue = recordingEnqueue();

const row = (name: string) => getServiceByName(db, name)!;
const make = (name: string, type = 'postgres') => createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name, type });
/** Reconciles until the wanted status (bounded), as the work queue would on requeues. */
async function until(name: string, status: string, max = 20) {
  for (let i = 0; i < max; i++) {
    if (row(name)?.status === status) return;
    await rec.reconcile(name); // the clock stands still: tests move it past backoffs explicitly
  }
  throw new Error(`${name} never reached ${status}; is ${row(name)?.status} (${row(name)?.error})`);
}
const mutations = () => rt.calls.filter((c) => ['run', 'start', 'stop', 'remove', 'pull'].includes(c.method)).length;

beforeEach(() => {
  db = memoryDb();
  dir = mkdtempSync(join(tmpdir(), 'svc-rec-'));
  rt = new FakeRuntime({ images: Object.values(images) });
  now = Date.parse('2026-01-01T00:00:00Z');
  ready = true;
  portOpen = true;
  httpStatus = 200;
  garage = undefined;
  rt.execHandler = () => ({ exitCode: ready ? 0 : 1, stdout: ready ? 'PONG\n' : '', stderr: '' });
  rec = createServiceReconciler({
    db, bus: new Bus(), runtime: rt, sealer, log: silentLogger, now: () => now,
    settings: { ...settings, dataDir: dir },
    httpGet: async () => httpStatus,
    tcpOpen: async () => portOpen,
    fetch: (url, init) => garage!.fetch(url, init),
  });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('service reconciler', () => {
  it('gives the data directory to the user the image runs as before its first start; a root image keeps root 700 (issue 35)', async () => {
    rt.imageUsers.set(images.redis, '1001');
    make('cache', 'redis');
    make('db', 'postgres');
    await until('cache', 'active');
    await until('db', 'active');
    const of = (n: string) => {
      const st = statSync(row(n).dataDir);
      return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
    };
    expect(of('cache')).toBe('1001:0 700');
    expect(of('db')).toBe('0:0 700');
    // Asked before the run, of the image the row runs.
    const order = rt.calls.filter((c) => c.method === 'imageUser' || c.method === 'run').map((c) => c.method);
    expect(order.slice(0, 2)).toEqual(['imageUser', 'run']);
    const before = mutations();
    expect(await rec.reconcile('cache')).toEqual({});
    expect(mutations()).toBe(before);
  });

  it('a container made before (its directory root 700) gets its directory given to the image user at its next start', async () => {
    make('cache', 'redis');
    await until('cache', 'active');
    expect(statSync(row('cache').dataDir).uid).toBe(0);
    rt.imageUsers.set(images.redis, '1001:1001');
    await rt.stop(row('cache').containerName, 0);
    for (let i = 0; i < 5 && rt.callsOf('start').length === 0; i++) {
      await rec.reconcile('cache');
      now += 60_000;
    }
    await until('cache', 'active');
    expect(rt.callsOf('start').length).toBeGreaterThan(0);
    const st = statSync(row('cache').dataDir);
    expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([1001, 1001, 0o700]);
  });

  it('provisions: container with labels, alias, data mount and env; waits for readiness; active; then steady', async () => {
    make('main');
    ready = false;
    const r1 = await rec.reconcile('main');
    expect(row('main').status).toBe('provisioning');
    expect(r1.requeueAfterMs).toBeGreaterThan(0);
    const spec = rt.containers.get('svc-svc-main')!.spec;
    const creds = openCredentials(sealer, row('main'));
    expect(spec).toMatchObject({
      image: 'pg:16', network: 'svc-unit', networkAliases: ['svc-svc-main'],
      labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'service', 'svc.service': 'main' },
      // created at the newest version, 18: mounted at its PGDATA, which the container is told
      mounts: [{ source: join(dir, 'services', 'main'), target: '/var/lib/postgresql/18/docker' }],
      env: { POSTGRES_USER: 'svc', POSTGRES_PASSWORD: creds.password, POSTGRES_DB: 'app', PGDATA: '/var/lib/postgresql/18/docker' },
    });
    portOpen = false; // still initialising: the TCP gate spares the exec
    const execs = rt.callsOf('exec').length;
    expect((await rec.reconcile('main')).requeueAfterMs).toBe(50);
    expect(rt.callsOf('exec').length).toBe(execs);
    portOpen = true;
    expect((await rec.reconcile('main')).requeueAfterMs).toBeGreaterThanOrEqual(50);
    expect(rt.callsOf('exec').at(-1)![1]).toEqual(['pg_isready', '-U', 'svc', '-d', 'app', '-h', '127.0.0.1', '-p', '5432']);
    ready = true;
    await until('main', 'active');
    const before = mutations();
    const updatedAt = row('main').updatedAt;
    expect(await rec.reconcile('main')).toEqual({});
    expect(mutations()).toBe(before);
    expect(row('main').updatedAt).toBe(updatedAt);
  });

  it('stop keeps the container and data; start brings it back to active', async () => {
    make('c', 'redis');
    await until('c', 'active');
    setDesiredRunning(db, enqueue, row('c'), false);
    await until('c', 'stopped');
    expect(rt.containers.get('svc-svc-c')!.state).toBe('exited');
    expect(existsSync(row('c').dataDir)).toBe(true);
    await rec.reconcile('c');
    expect(rt.callsOf('stop')).toHaveLength(1);
    setDesiredRunning(db, enqueue, row('c'), true);
    await until('c', 'active');
    expect(row('c').healFailures).toBe(0);
  });

  it('heals a dead container, and recreates a removed one with the same data dir and credentials', async () => {
    make('db');
    await until('db', 'active');
    const spec = rt.containers.get('svc-svc-db')!.spec;
    rt.kill('svc-svc-db');
    await rec.reconcile('db');
    await until('db', 'active');
    expect(rt.callsOf('start')).toHaveLength(1);
    expect(row('db').healFailures).toBe(1);
    await rt.remove('svc-svc-db');
    now += 10_000;
    await rec.reconcile('db');
    await until('db', 'active');
    expect(rt.callsOf('run')).toHaveLength(2);
    const again = rt.containers.get('svc-svc-db')!.spec;
    expect(again.mounts).toEqual(spec.mounts);
    expect(again.env).toEqual(spec.env);
  });

  it('a stopped container whose network was removed behind svc is removed and recreated on the network made again (issue 35)', async () => {
    make('db');
    await until('db', 'active');
    const spec = rt.containers.get('svc-svc-db')!.spec;
    rt.kill('svc-svc-db');
    rt.removeNetwork('svc-unit'); // docker network rm, while the container is stopped
    expect(await rec.reconcile('db')).toEqual({ requeueAfterMs: 0 }); // the start failed: removed, come back at once
    expect(rt.containers.has('svc-svc-db')).toBe(false);
    expect(row('db')).toMatchObject({ status: 'provisioning', error: null }); // not recorded as a failure of the service
    await until('db', 'active');
    expect(rt.networks.has('svc-unit')).toBe(true);
    expect(rt.callsOf('run')).toHaveLength(2);
    const again = rt.containers.get('svc-svc-db')!.spec;
    expect(again.mounts).toEqual(spec.mounts);
    expect(again.env).toEqual(spec.env);
    const before = mutations();
    await rec.reconcile('db');
    expect(mutations()).toBe(before);
  });

  it('backs off when the container keeps dying: 10 s, 20 s, ...', async () => {
    make('loop', 'redis');
    await until('loop', 'active');
    const crash = async () => {
      rt.kill('svc-svc-loop');
      return rec.reconcile('loop');
    };
    await crash(); // restart 1, immediate
    await until('loop', 'active');
    expect(await crash()).toEqual({ requeueAfterMs: 10_000 }); // not before the backoff
    expect(rt.callsOf('start')).toHaveLength(1);
    now += 10_000;
    await rec.reconcile('loop');
    expect(rt.callsOf('start')).toHaveLength(2);
    await until('loop', 'active');
    expect(await crash()).toEqual({ requeueAfterMs: 20_000 });
    expect(row('loop').healFailures).toBe(2);
  });

  it('a provisioning failure is status error with the engine message, retried after the backoff', async () => {
    rt.images.delete('pg:16');
    rt.pullFailures.set('pg:16', 'pull access denied for pg');
    make('bad');
    const r = await rec.reconcile('bad');
    expect(row('bad')).toMatchObject({ status: 'error', error: expect.stringContaining('pull access denied for pg'), healFailures: 1 });
    expect(r).toEqual({ requeueAfterMs: 10_000 });
    expect(await rec.reconcile('bad')).toEqual({ requeueAfterMs: 10_000 });
    rt.pullFailures.clear();
    now += 10_000;
    await until('bad', 'active');
    expect(row('bad').error).toBeNull();
  });

  it('a service in error is announced once and its return to active once (notifications)', async () => {
    createChannel(commandCtx(db, { sealer }), { name: 'ops', type: 'slack', events: ['service_error', 'service_recovered'], config: { url: 'http://127.0.0.1:9/x' } }, 'api');
    rt.images.delete('pg:16');
    rt.pullFailures.set('pg:16', 'pull access denied for pg');
    make('bad');
    await rec.reconcile('bad');
    now += 10_000;
    await rec.reconcile('bad'); // retries, still failing: no second alert
    now += 20_000;
    await rec.reconcile('bad');
    rt.pullFailures.clear();
    now += 40_000;
    await until('bad', 'active');
    const out = listOutbox(db).reverse();
    expect(out.map((m) => [m.event, m.subject])).toEqual([
      ['service_error', 'service bad (postgres) is in error'],
      ['service_recovered', 'service bad (postgres) is active again'],
    ]);
  });

  it('a container that exits while provisioning is an error', async () => {
    rt.behaviour.set('mysql:8', 'exits');
    make('my', 'mysql');
    await rec.reconcile('my');
    await rec.reconcile('my');
    expect(row('my')).toMatchObject({ status: 'error', error: 'container exited with code 1 before it was ready' });
  });

  it('an unreachable engine throws (work-queue backoff) without recording anything', async () => {
    make('x', 'redis');
    rt.setReachable(false);
    await expect(rec.reconcile('x')).rejects.toThrow();
    expect(row('x')).toMatchObject({ status: 'pending', error: null });
  });

  it('delete: container removed, data kept; with purge the data dir goes too; then the row', async () => {
    make('keep', 'redis');
    make('wipe', 'redis');
    await until('keep', 'active');
    await until('wipe', 'active');
    markServiceDeleted(db, enqueue, row('keep'), { purge: false, force: false });
    markServiceDeleted(db, enqueue, row('wipe'), { purge: true, force: false });
    for (let i = 0; i < 5; i++) {
      await rec.reconcile('keep');
      await rec.reconcile('wipe');
    }
    expect(row('keep')).toBeUndefined();
    expect(row('wipe')).toBeUndefined();
    expect(rt.containers.size).toBe(0);
    expect(existsSync(join(dir, 'services', 'keep'))).toBe(true);
    expect(existsSync(join(dir, 'services', 'wipe'))).toBe(false);
    expect(await rec.reconcile('wipe')).toEqual({});
  });

  it('removes a container labelled as our service with no row; listNames includes it for resync', async () => {
    await rt.run({ name: 'svc-svc-ghost', image: 'redis:7', labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'service', 'svc.service': 'ghost' } });
    await rt.run({ name: 'other', image: 'redis:7', labels: { 'svc.managed': 'true', 'svc.instance': 'someone-else', 'svc.role': 'service', 'svc.service': 'ghost' } });
    make('real', 'redis');
    expect((await rec.listNames()).sort()).toEqual(['ghost', 'real']);
    await rec.reconcile('ghost');
    expect([...rt.containers.keys()]).toEqual(['other']);
  });

  it('garage: config file in the data dir, mounted; provisioned through the admin API before active', async () => {
    make('files', 'garage');
    const creds = openCredentials(sealer, row('files'));
    garage = fakeGarage(creds.admin_token);
    httpStatus = undefined;
    await rec.reconcile('files');
    const toml = join(dir, 'services', 'files', 'garage.toml');
    expect(readFileSync(toml, 'utf8')).toContain(`admin_token = "${creds.admin_token}"`);
    expect(statSync(toml).mode & 0o777).toBe(0o600);
    expect(rt.containers.get('svc-svc-files')!.spec.mounts).toContainEqual({ source: toml, target: '/etc/garage.toml', readOnly: true });
    expect(row('files').status).toBe('provisioning');
    await rec.reconcile('files');
    expect(garage.state.calls).toEqual([]); // not ready: no admin calls yet
    httpStatus = 200;
    await until('files', 'active');
    const after = openCredentials(sealer, row('files'));
    expect(after.access_key).toBe(garage.state.keys[0].id);
    expect(after.secret_key).toBe(garage.state.keys[0].secret);
    expect(garage.state.calls[0]).toBe('GET /v1/status');
  });

  it('garage: an admin API failure is recorded and retried later', async () => {
    make('objs', 'garage');
    garage = fakeGarage('wrong-token');
    await until('objs', 'error');
    expect(row('objs').error).toMatch(/HTTP 403/);
    garage = fakeGarage(openCredentials(sealer, row('objs')).admin_token);
    now += 10_000;
    await until('objs', 'active');
  });
});
