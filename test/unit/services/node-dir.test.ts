// A managed service placed on another node gets its directory there (src/reconcilers/service/node-dir.ts,
// docs/decisions/0042-service-data-on-other-nodes.md): the pure parts (what to make, when to refuse) and the
// reconciler's create path on the fake runtime, whose node disks are host directories.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { services, type ServiceRow } from '../../../src/store/schema/index.js';
import { openCredentials, getServiceByName } from '../../../src/store/services.js';
import { observeService } from '../../../src/observed/services.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import { HELD_ON_NODE_FILE, heldElsewhereRefusal, nodeDirPlan, nodeDirRefusal } from '../../../src/reconcilers/service/node-dir.js';
import { garage as garageKind, garageToml } from '../../../src/catalog/garage.js';
import { postgres as postgresKind } from '../../../src/catalog/postgres.js';
import type { Reconciler } from '../../../src/controller/types.js';
import type { Db } from '../../../src/store/db.js';
import { fakeGarage } from './fake-garage.js';
import { createService } from '../../support/commands.js';
import { Bus } from '../../../src/controller/bus.js';

describe('nodeDirPlan', () => {
  const creds = { rpc_secret: 'ab', admin_token: 'tok', region: 'garage', bucket: 'objs', key_name: 'svc-objs', access_key: '', secret_key: '' };
  it("is the service's directory relative to the data directory, with the catalog's files and modes", () => {
    expect(nodeDirPlan('/srv/svc', { name: 'objs', dataDir: '/srv/svc/services/objs' }, garageKind, creds)).toEqual({
      dir: 'services/objs',
      files: [{ path: 'services/objs/garage.toml', content: garageToml(creds), mode: 0o600 }],
    });
    expect(nodeDirPlan('/srv/svc', { name: 'pg', dataDir: '/srv/svc/services/pg' }, postgresKind, {})).toEqual({ dir: 'services/pg', files: [] });
  });
  it.each(['/elsewhere/pg', '/srv/svc', '/srv/other/services/pg'])('refuses a data directory %s outside the data directory', (dataDir) => {
    expect(() => nodeDirPlan('/srv/svc', { name: 'pg', dataDir }, postgresKind, {})).toThrow(/is not inside \/srv\/svc/);
  });
});

describe('nodeDirRefusal', () => {
  const base = { name: 'pg', node: 'worker-1', hereEntries: 0, activated: false, existsThere: false };
  it.each([
    ['a new service, nothing anywhere', base, undefined],
    ['a new service whose directory a restore put on the node', { ...base, existsThere: true }, undefined],
    ['an active-once service whose directory is on the node', { ...base, activated: true, existsThere: true }, undefined],
    ['data on this host', { ...base, hereEntries: 3 }, /is on this host's disk .* Remove the label/],
    ['data on this host, directory on the node too', { ...base, hereEntries: 1, existsThere: true }, /is on this host's disk/],
    ['an active-once service, no directory on the node', { ...base, activated: true }, /has run before, but node worker-1 .* has no directory services\/pg/],
    ['a dump waiting here (a restore without its data directory)', { ...base, dumpWaitingHere: true }, /a dump of service pg waits on this host's disk \(restore-dumps\/pg.sql/],
  ])('%s', (_what, facts, expected) => {
    const r = nodeDirRefusal(facts);
    if (expected === undefined) expect(r).toBeUndefined();
    else expect(r).toMatch(expected);
  });
});

describe('heldElsewhereRefusal', () => {
  it.each([
    ['never active, no note', false, undefined, undefined],
    ['never active, a note (made on the node, never started there)', false, 'worker-1', undefined],
    ['active once, no note (its data here)', true, undefined, undefined],
    ['active once on the node the note names', true, 'worker-1', /the data of service pg is on node worker-1, .* no node is labelled now: .* Put the label svc.services=true back on worker-1/],
  ] as const)('%s', (_what, activated, heldOn, expected) => {
    const r = heldElsewhereRefusal('pg', activated, heldOn);
    if (expected === undefined) expect(r).toBeUndefined();
    else expect(r).toMatch(expected);
  });
});

describe('service reconciler, data on another node', () => {
  const images = { postgres: 'pg:16', mysql: 'mysql:8', redis: 'redis:7', garage: 'garage:1' };
  const worker = { id: 'w1', hostname: 'worker-1' };
  let db: Db;
  let dir: string;
  let nodeDir: string;
  let rt: FakeRuntime;
  let now: number;
  let rec: Reconciler;
  let garage: ReturnType<typeof fakeGarage> | undefined;
  const sealer = testSealer();
  const enqueue = recordingEnqueue();
  const row = (name: string) => getServiceByName(db, name)!;
  const make = (name: string, type = 'postgres') => {
    const made = createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name, type });
    if (type === 'garage') garage = fakeGarage(openCredentials(sealer, row(name)).admin_token);
    return made;
  };
  async function until(name: string, status: string, max = 20) {
    for (let i = 0; i < max; i++) {
      if (row(name)?.status === status) return;
      await rec.reconcile(name);
    }
    throw new Error(`${name} never reached ${status}; is ${row(name)?.status} (${row(name)?.error})`);
  }
  const mutations = () => rt.calls.filter((c) => ['run', 'start', 'stop', 'remove', 'pull', 'openNodeDisk'].includes(c.method)).length;

  beforeEach(() => {
    db = memoryDb();
    dir = mkdtempSync(join(tmpdir(), 'svc-nodedir-'));
    nodeDir = mkdtempSync(join(tmpdir(), 'svc-nodedir-w1-'));
    rmSync(nodeDir, { recursive: true }); // a fresh node: not even its data directory exists
    rt = new FakeRuntime({ images: Object.values(images) });
    rt.swarm = true;
    rt.newServicesOn = worker;
    rt.nodeDisks.set(worker.id, nodeDir);
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
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(nodeDir, { recursive: true, force: true });
  });

  it("a service placed on a fresh node: its directory made there (700) once, pinned to that node, active; again changes nothing", async () => {
    make('pg');
    rmSync(join(dir, 'services'), { recursive: true }); // as after a restore onto the node: nothing here
    await until('pg', 'active');
    expect(statSync(join(nodeDir, 'services', 'pg')).mode & 0o777).toBe(0o700);
    expect(rt.callsOf('openNodeDisk')).toEqual([['w1', `prepare-${row('pg').id}`]]);
    expect(rt.openDisks.size).toBe(0); // the helper is gone
    expect(rt.containers.get('svc-svc-pg')!.spec.dataNode).toEqual(worker);
    // Here only the empty directory of any service held elsewhere, and svc's note naming the node.
    expect(readdirSync(join(dir, 'services', 'pg'))).toEqual([HELD_ON_NODE_FILE]);
    expect(JSON.parse(readFileSync(join(dir, 'services', 'pg', HELD_ON_NODE_FILE), 'utf8'))).toEqual(worker);
    const before = mutations();
    expect(await rec.reconcile('pg')).toEqual({});
    expect(mutations()).toBe(before);
  });

  it("a service whose image runs as uid 1001: its directory on the node is given to 1001 (0 group), 700 (issue 35)", async () => {
    rt.imageUsers.set(images.redis, '1001');
    make('cache', 'redis');
    rmSync(join(dir, 'services'), { recursive: true });
    await until('cache', 'active');
    const st = statSync(join(nodeDir, 'services', 'cache'));
    expect([st.uid, st.gid, (st.mode & 0o7777).toString(8)]).toEqual([1001, 0, '700']);
    const before = mutations();
    expect(await rec.reconcile('cache')).toEqual({});
    expect(mutations()).toBe(before);
  });

  it("Garage's config is written on the node with its mode, not on this host", async () => {
    make('objs', 'garage');
    await until('objs', 'active');
    const creds = openCredentials(sealer, row('objs'));
    const file = join(nodeDir, 'services', 'objs', 'garage.toml');
    expect(readFileSync(file, 'utf8')).toBe(garageToml(creds));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, 'services', 'objs', 'garage.toml'))).toBe(false);
  });

  it('a node that cannot be prepared leaves the service in error with the reason, retried after the backoff, never run elsewhere', async () => {
    rt.nodeDisks.delete(worker.id); // its agent does not run
    make('pg');
    expect(await rec.reconcile('pg')).toEqual({ requeueAfterMs: 10_000 });
    expect(row('pg')).toMatchObject({ status: 'error', healFailures: 1 });
    expect(row('pg').error).toMatch(/could not prepare the data directory of pg on node worker-1: the agent of node worker-1 is not running yet/);
    expect(rt.callsOf('run')).toHaveLength(0);
    const before = mutations();
    expect(await rec.reconcile('pg')).toEqual({ requeueAfterMs: 10_000 }); // waiting: nothing tried
    expect(mutations()).toBe(before);
    rt.nodeDisks.set(worker.id, nodeDir);
    now += 10_000;
    await until('pg', 'active');
    expect(rt.callsOf('run')).toHaveLength(1);
    expect(existsSync(join(nodeDir, 'services', 'pg'))).toBe(true);
  });

  it('a step that fails on the node removes the helper and is an error', async () => {
    rt.nodeDiskFault = /^write /;
    make('objs', 'garage');
    await rec.reconcile('objs');
    expect(row('objs')).toMatchObject({ status: 'error', error: expect.stringMatching(/^write services\/.*toml on node worker-1 failed/) });
    expect(rt.openDisks.size).toBe(0);
    expect(rt.callsOf('run')).toHaveLength(0);
  });

  it("data on this host's disk (an offline restore) is never left behind for an empty directory on the node", async () => {
    make('pg');
    writeFileSync(join(dir, 'services', 'pg', 'PG_VERSION'), '16\n');
    await rec.reconcile('pg');
    expect(row('pg').status).toBe('error');
    expect(row('pg').error).toMatch(/the data of service pg is on this host's disk .* placed on node worker-1/);
    expect(rt.callsOf('openNodeDisk')).toHaveLength(0);
    expect(rt.callsOf('run')).toHaveLength(0);
    const before = mutations();
    await rec.reconcile('pg');
    expect(mutations()).toBe(before);
  });

  it("a dump a restore left on this host's disk for the service keeps it off the node", async () => {
    make('pg');
    mkdirSync(join(dir, 'restore-dumps'));
    writeFileSync(join(dir, 'restore-dumps', 'pg.sql'), 'CREATE TABLE t (a int);\n');
    await rec.reconcile('pg');
    expect(row('pg')).toMatchObject({ status: 'error', error: expect.stringMatching(/a dump of service pg waits on this host's disk/) });
    expect(rt.callsOf('openNodeDisk')).toHaveLength(0);
    expect(rt.callsOf('run')).toHaveLength(0);
  });

  it('a service that ran before and whose directory the node lacks is refused; one a restore put there starts', async () => {
    make('pg');
    observeService(db, row('pg').id, { activatedAt: '2025-12-01T00:00:00Z', status: 'active' });
    await rec.reconcile('pg');
    expect(row('pg').error).toMatch(/has run before, but node worker-1 .* has no directory services\/pg/);
    expect(rt.openDisks.size).toBe(0);
    expect(existsSync(join(nodeDir, 'services', 'pg'))).toBe(false);
    expect(rt.callsOf('run')).toHaveLength(0);
    mkdirSync(join(nodeDir, 'services', 'pg'), { recursive: true });
    writeFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), '16\n');
    now += 10_000;
    await until('pg', 'active');
    expect(readFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), 'utf8')).toBe('16\n');
  });

  it("a service that ran on the node is not re-created on this host's empty directory once the label is gone; with the label back it is", async () => {
    make('pg');
    await until('pg', 'active');
    writeFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), '16\n'); // its data, on the node
    rt.newServicesOn = undefined; // the label removed
    rt.containers.delete('svc-svc-pg'); // and its task gone (the service removed by hand)
    await rec.reconcile('pg');
    expect(row('pg')).toMatchObject({ status: 'error', error: expect.stringMatching(/the data of service pg is on node worker-1, .* does not start it on this host's empty directory/) });
    expect(rt.callsOf('run')).toHaveLength(1); // the first create only
    const before = mutations();
    await rec.reconcile('pg'); // waiting out the backoff: nothing tried
    expect(mutations()).toBe(before);
    rt.newServicesOn = worker; // the label back
    now += 10_000;
    await until('pg', 'active');
    expect(rt.containers.get('svc-svc-pg')!.spec.dataNode).toEqual(worker);
    expect(readFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), 'utf8')).toBe('16\n');
  });

  it("a service made on the node that never ran there starts on this host when the label is gone, the note removed", async () => {
    rt.nodeDiskFault = undefined;
    make('pg');
    await rec.reconcile('pg'); // created on the node, not active yet
    expect(JSON.parse(readFileSync(join(dir, 'services', 'pg', HELD_ON_NODE_FILE), 'utf8'))).toEqual(worker);
    rt.newServicesOn = undefined;
    rt.containers.delete('svc-svc-pg');
    await until('pg', 'active');
    expect(rt.containers.get('svc-svc-pg')!.spec.dataNode).toBe('here');
    expect(existsSync(join(dir, 'services', 'pg', HELD_ON_NODE_FILE))).toBe(false);
  });

  describe('purge of a service held on the node', () => {
    const workerView = { ...worker, address: '10.0.0.2', role: 'worker' as const, leader: false, availability: 'active' as const, state: 'ready', labels: { 'svc.services': 'true' }, engineVersion: '20.10.24', cpus: 2, memoryMb: 2048 };
    const deleteWithPurge = (name: string) => db.update(services).set({ deletedAt: new Date(now).toISOString(), purgeOnDelete: true }).where(eq(services.name, name)).run();
    async function untilGone(name: string, max = 10) {
      for (let i = 0; i < max && row(name); i++) await rec.reconcile(name);
      return row(name) === undefined;
    }
    beforeEach(async () => {
      rt.nodeList.push(workerView);
      make('pg');
      await until('pg', 'active');
      writeFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), '16\n');
    });

    it("removes its directory on the node, through a helper there, then here's", async () => {
      deleteWithPurge('pg');
      expect(await untilGone('pg')).toBe(true);
      expect(existsSync(join(nodeDir, 'services', 'pg'))).toBe(false);
      expect(existsSync(join(dir, 'services', 'pg'))).toBe(false);
      expect(rt.callsOf('openNodeDisk').at(-1)).toEqual(['w1', expect.stringMatching(/^purge-\d+$/)]);
      expect(rt.openDisks.size).toBe(0);
    });

    it('a node that cannot be reached now: the deletion waits and is retried, nothing removed; then purged', async () => {
      rt.nodeDisks.delete(worker.id); // its agent does not run
      deleteWithPurge('pg');
      await expect(untilGone('pg')).rejects.toThrow(/could not purge the data of pg on node worker-1: the agent of node worker-1 is not running yet/);
      expect(row('pg')).toBeDefined();
      expect(readFileSync(join(nodeDir, 'services', 'pg', 'PG_VERSION'), 'utf8')).toBe('16\n');
      expect(existsSync(join(dir, 'services', 'pg'))).toBe(true); // the note kept: the next attempt knows the node
      rt.nodeDisks.set(worker.id, nodeDir);
      expect(await untilGone('pg')).toBe(true);
      expect(existsSync(join(nodeDir, 'services', 'pg'))).toBe(false);
    });

    it('a node no longer in the Swarm: the deletion ends (nothing can reach its disk)', async () => {
      rt.nodeList.pop();
      deleteWithPurge('pg');
      expect(await untilGone('pg')).toBe(true);
      expect(existsSync(join(dir, 'services', 'pg'))).toBe(false);
      expect(rt.callsOf('openNodeDisk').filter(([, tag]) => String(tag).startsWith('purge-'))).toEqual([]);
    });
  });

  it('on this host (no labelled node) nothing changes: the directory here, pinned here', async () => {
    rt.newServicesOn = undefined;
    make('objs', 'garage');
    await until('objs', 'active');
    expect(existsSync(join(dir, 'services', 'objs', 'garage.toml'))).toBe(true);
    expect(rt.callsOf('openNodeDisk')).toHaveLength(0);
    expect(rt.containers.get('svc-svc-objs')!.spec.dataNode).toBe('here');
  });
});
