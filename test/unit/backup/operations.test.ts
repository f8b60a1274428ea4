// The restore and import operations on real files and a real SQLite database, with a fake engine: a
// restore runs through its phases, a daemon that died in the middle of one puts the previous state back at
// its next start and finishes it, and an uploaded archive is checked by its reconciler. Every case ends by
// running its step again and asserting nothing changed (rule 2).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createArchive } from '../../../src/backup/create-archive.js';
import { checkImport, uploadOf } from '../../../src/backup/import.js';
import { createGate } from '../../../src/backup/quiesce.js';
import { planRemoteData, type RemoteDataFacts } from '../../../src/backup/held-elsewhere.js';
import { recoverRestores, stagingOf, stepRestore, type RestoreDeps } from '../../../src/backup/restore.js';
import { silentLogger } from '../../../src/log.js';
import { openDb, type Db } from '../../../src/store/db.js';
import { completeBackup, insertWithFreeName, listBackups, type BackupRow } from '../../../src/store/backups.js';
import { getImport, getRestore, insertImport, insertRemoteImport, insertRestore, updateImport, updateRestore } from '../../../src/store/backup-ops.js';

import { FakeRuntime } from '../../support/fake-runtime.js';
import { recordingEnqueue, testSealer } from '../../support/db.js';
import { createService } from '../../support/commands.js';

let root: string;
let db: Db;
let dataDir: string;
let backupDir: string;
const sealer = testSealer();
const images = { postgres: 'pg', mysql: 'my', redis: 'redis', garage: 'g' };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bk-ops-'));
  dataDir = join(root, 'data');
  backupDir = join(dataDir, 'backups');
  db = openDb(join(dataDir, 'svc.db'));
});
afterEach(async () => {
  db.$client.close();
  await rm(root, { recursive: true, force: true });
});

/** A completed backup of a state with service `old-pg`; then the live state moves on to `new-pg`. */
async function backupThenChange(o: { uid?: number } = {}) {
  createService(db, sealer, recordingEnqueue(), { dataDir, instance: 'svc', images }, { name: 'old-pg', type: 'postgres' });
  await writeFile(join(dataDir, 'services', 'old-pg', 'PG_VERSION'), 'archived\n');
  if (o.uid !== undefined) {
    // The files of an image that runs as its own user (issue 35).
    await chown(join(dataDir, 'services', 'old-pg'), o.uid, o.uid);
    await chown(join(dataDir, 'services', 'old-pg', 'PG_VERSION'), o.uid, o.uid);
    await chmod(join(dataDir, 'services', 'old-pg', 'PG_VERSION'), 0o640);
  }
  const row = insertWithFreeName(db, new Date('2026-01-01T00:00:00Z'), { status: 'running', trigger: 'manual' });
  const size = await createArchive({ db, sealer, runtime: new FakeRuntime(), log: silentLogger, dataDir, backupDir, effectiveEnv: {} }, row.filename);
  completeBackup(db, row.id, size);
  db.$client.exec("DELETE FROM services WHERE name = 'old-pg'");
  await rm(join(dataDir, 'services', 'old-pg'), { recursive: true });
  createService(db, sealer, recordingEnqueue(), { dataDir, instance: 'svc', images }, { name: 'new-pg', type: 'postgres' });
  await writeFile(join(dataDir, 'services', 'new-pg', 'PG_VERSION'), 'live\n');
  return row;
}

function restoreDeps(o: { runtime?: FakeRuntime; changes?: string[] } = {}): RestoreDeps & { resyncs: number } {
  const deps = {
    db,
    sealer,
    runtime: o.runtime ?? new FakeRuntime(),
    log: silentLogger,
    dataDir,
    backupDir,
    instance: 'svc',
    gate: createGate(),
    resyncs: 0,
    newSafetyBackup: () => insertWithFreeName(db, new Date('2026-01-02T00:00:00Z'), { status: 'running', trigger: 'safety' }),
    async buildBackup(row: BackupRow) {
      const size = await createArchive({ db, sealer, runtime: new FakeRuntime(), log: silentLogger, dataDir, backupDir, effectiveEnv: {} }, row.filename);
      return completeBackup(db, row.id, size)!;
    },
    async resync() {
      deps.resyncs++;
    },
    changed: () => o.changes?.push(getRestore(db, 1)?.phase ?? '?'),
  };
  return deps;
}

const serviceNames = () => db.$client.prepare('SELECT name FROM services ORDER BY name').pluck().all();
const snapshot = async () => ({
  restores: JSON.stringify(db.$client.prepare('SELECT * FROM restores').all()),
  backups: JSON.stringify(listBackups(db)),
  services: serviceNames(),
  dataDir: (await readdir(dataDir)).sort(),
  live: (await readdir(join(dataDir, 'services'))).sort(),
});

describe('restore operation', () => {
  it('runs pending -> unpacking -> safety_backup -> swapping -> committed -> completed, then is steady', async () => {
    const backup = await backupThenChange();
    const op = insertRestore(db, backup.id, new Date());
    const changes: string[] = [];
    const deps = restoreDeps({ changes });
    await stepRestore(deps, op.id);
    expect(changes).toEqual(['unpacking', 'safety_backup', 'swapping', 'committed', 'completed']);
    const done = getRestore(db, op.id)!;
    expect(done).toMatchObject({ phase: 'completed', error: null });
    expect(listBackups(db).find((b) => b.id === done.safetyBackupId)).toMatchObject({ trigger: 'safety', status: 'completed' });
    expect(serviceNames()).toEqual(['old-pg']);
    expect(await readFile(join(dataDir, 'services', 'old-pg', 'PG_VERSION'), 'utf8')).toBe('archived\n');
    expect(existsSync(stagingOf(dataDir, op.id))).toBe(false);
    expect(deps.gate.paused()).toBe(false);
    expect(deps.resyncs).toBe(1);

    const before = await snapshot();
    await stepRestore(deps, op.id);
    recoverRestores(db, dataDir, silentLogger);
    expect(await snapshot()).toEqual(before);
    expect(deps.resyncs).toBe(1);
  });

  it('a daemon killed mid-swap (services/ moved, rows not committed) puts the previous state back at start, then finishes the restore', async () => {
    const backup = await backupThenChange();
    const op = insertRestore(db, backup.id, new Date());
    // The first daemon: its engine never answers the stop, so the step hangs inside `swapping`; it "dies" there.
    const hung = new FakeRuntime({ images: ['pg'] });
    await hung.run({ name: 'svc-svc-new-pg', image: 'pg', labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'service' } });
    const stuck = restoreDeps({ runtime: hung });
    stuck.runtime.stop = () => new Promise(() => {});
    void stepRestore(stuck, op.id);
    await waitForPhase(op.id, 'swapping');
    // What the dead process had done next: the live services/ aside and the archive's in place.
    const staging = stagingOf(dataDir, op.id);
    await rename(join(dataDir, 'services'), join(staging, 'previous-services'));
    await rename(join(staging, 'archive', 'services'), join(dataDir, 'services'));
    expect(serviceNames()).toEqual(['new-pg']); // the rows were never committed

    // The next start.
    recoverRestores(db, dataDir, silentLogger);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'pending', attempts: 1 });
    expect(await readdir(join(dataDir, 'services'))).toEqual(['new-pg']);
    expect(await readFile(join(dataDir, 'services', 'new-pg', 'PG_VERSION'), 'utf8')).toBe('live\n');
    expect(existsSync(staging)).toBe(false);

    const deps = restoreDeps();
    await stepRestore(deps, op.id);
    const done = getRestore(db, op.id)!;
    expect(done.phase).toBe('completed');
    // The safety backup the first attempt completed is the one kept: still the state before the restore.
    expect(listBackups(db).filter((b) => b.trigger === 'safety')).toHaveLength(1);
    expect(serviceNames()).toEqual(['old-pg']);
    expect(await readdir(join(dataDir, 'services'))).toEqual(['old-pg']);
    const before = await snapshot();
    await stepRestore(deps, op.id);
    expect(await snapshot()).toEqual(before);
  });

  it('a daemon killed after the commit only cleans up at start', async () => {
    const backup = await backupThenChange();
    const op = insertRestore(db, backup.id, new Date());
    await mkdir(join(stagingOf(dataDir, op.id), 'previous-services'), { recursive: true });
    updateRestore(db, op.id, { phase: 'committed' });
    recoverRestores(db, dataDir, silentLogger);
    expect(getRestore(db, op.id)!.phase).toBe('committed');
    await stepRestore(restoreDeps(), op.id);
    expect(getRestore(db, op.id)!.phase).toBe('completed');
    expect(existsSync(stagingOf(dataDir, op.id))).toBe(false);
    expect(serviceNames()).toEqual(['new-pg']); // nothing replayed
  });

  it('gives up after three interrupted starts, with the previous state back', async () => {
    const backup = await backupThenChange();
    const op = insertRestore(db, backup.id, new Date());
    updateRestore(db, op.id, { phase: 'unpacking', attempts: 2 });
    recoverRestores(db, dataDir, silentLogger);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'failed', code: 'restore_failed', attempts: 3 });
    expect(getRestore(db, op.id)!.error).toMatch(/rolled back: svc stopped during it 3 times/);
  });

  it('a refused archive fails with invalid_archive before anything is touched, and takes no safety backup', async () => {
    const backup = await backupThenChange();
    await writeFile(join(backupDir, backup.filename), 'not a gzip');
    const op = insertRestore(db, backup.id, new Date());
    const deps = restoreDeps();
    await stepRestore(deps, op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'failed', code: 'invalid_archive' });
    expect(listBackups(db).filter((b) => b.trigger === 'safety')).toHaveLength(0);
    expect(serviceNames()).toEqual(['new-pg']);
    expect(deps.resyncs).toBe(0);
    const before = await snapshot();
    await stepRestore(deps, op.id);
    expect(await snapshot()).toEqual(before);
  });
});

describe('restore of services whose data is on another node (issue 19)', () => {
  const w1 = { id: 'w1', hostname: 'worker-1' };
  const refuses = async (arrange: (rt: FakeRuntime) => void, message: RegExp) => {
    const backup = await backupThenChange();
    const runtime = new FakeRuntime();
    arrange(runtime);
    const op = insertRestore(db, backup.id, new Date());
    const deps = restoreDeps({ runtime });
    const before = { services: serviceNames(), live: (await readdir(join(dataDir, 'services'))).sort() };
    await stepRestore(deps, op.id);
    const row = getRestore(db, op.id)!;
    expect(row).toMatchObject({ phase: 'failed', code: 'service_on_other_node' });
    expect(row.error).toMatch(message);
    expect(row.error).toMatch(/Nothing was changed$/);
    // Nothing changed: no safety backup, no container stopped, the same rows and files, no staging left.
    expect(listBackups(db).filter((b) => b.trigger === 'safety')).toHaveLength(0);
    expect(runtime.callsOf('stop')).toEqual([]);
    expect(runtime.callsOf('openNodeDisk')).toEqual([]);
    expect({ services: serviceNames(), live: (await readdir(join(dataDir, 'services'))).sort() }).toEqual(before);
    expect(await readFile(join(dataDir, 'services', 'new-pg', 'PG_VERSION'), 'utf8')).toBe('live\n');
    expect(existsSync(stagingOf(dataDir, op.id))).toBe(false);
    expect(deps.resyncs).toBe(0);
    const again = await snapshot();
    await stepRestore(deps, op.id);
    expect(await snapshot()).toEqual(again);
  };

  /** The worker's own disk (its data directory), holding the live service's data; services now go there. */
  const onWorker = async (runtime: FakeRuntime) => {
    const disk = join(root, 'worker-1');
    await mkdir(join(disk, 'services', 'new-pg'), { recursive: true });
    await writeFile(join(disk, 'services', 'new-pg', 'PG_VERSION'), 'live on the worker\n');
    runtime.nodeDisks.set('w1', disk);
    runtime.dataNodes.set('svc-svc-new-pg', w1);
    runtime.newServicesOn = w1;
    return disk;
  };

  it('a live service held on a worker where services no longer go: refused with its node, nothing changed', async () => {
    await refuses((rt) => rt.dataNodes.set('svc-svc-new-pg', w1), /the data of service new-pg is on node worker-1, where services are no longer placed \(no node is labelled/);
  });

  it('the restored services go to the labelled worker: its services/ is swapped there, the manager keeps empty directories, the helper is removed', async () => {
    const backup = await backupThenChange({ uid: 1001 });
    const runtime = new FakeRuntime();
    const disk = await onWorker(runtime);
    const op = insertRestore(db, backup.id, new Date());
    const deps = restoreDeps({ runtime });
    await stepRestore(deps, op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'completed', error: null });
    expect(serviceNames()).toEqual(['old-pg']);
    expect(await readFile(join(disk, 'services', 'old-pg', 'PG_VERSION'), 'utf8')).toBe('archived\n');
    // The owners go to the node too (the swap's tar is not `portable`; the node's engine unpacks as root).
    const pv = await stat(join(disk, 'services', 'old-pg', 'PG_VERSION'));
    expect([pv.uid, pv.gid, pv.mode & 0o7777]).toEqual([1001, 1001, 0o640]);
    expect((await stat(join(disk, 'services', 'old-pg'))).uid).toBe(1001);
    expect(await readdir(join(disk, 'services'))).toEqual(['old-pg']);
    // No staging left on the node (the previous services/ went with it), nor here; the helper is closed.
    expect((await readdir(disk)).sort()).toEqual(['services']);
    expect(runtime.openDisks.size).toBe(0);
    expect(runtime.callsOf('openNodeDisk')).toEqual([['w1', `restore-${op.id}`]]);
    expect(await readdir(join(dataDir, 'services'))).toEqual([]);
    expect(existsSync(stagingOf(dataDir, op.id))).toBe(false);

    const before = await snapshot();
    await stepRestore(deps, op.id);
    recoverRestores(db, dataDir, silentLogger);
    expect(await snapshot()).toEqual(before);
    expect(runtime.callsOf('openNodeDisk')).toHaveLength(1);
  });

  it('a fault on the node mid-swap: the previous services/ is back there and here, the rows untouched', async () => {
    const backup = await backupThenChange();
    const runtime = new FakeRuntime();
    const disk = await onWorker(runtime);
    runtime.nodeDiskFault = /^rename \.restore-\d+-node\/services services$/;
    const op = insertRestore(db, backup.id, new Date());
    const deps = restoreDeps({ runtime });
    await stepRestore(deps, op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'failed', code: 'restore_failed' });
    expect(getRestore(db, op.id)!.error).toMatch(/rolled back: rename .* on node worker-1 failed/);
    expect(serviceNames()).toEqual(['new-pg']);
    expect(await readFile(join(disk, 'services', 'new-pg', 'PG_VERSION'), 'utf8')).toBe('live on the worker\n');
    expect((await readdir(disk)).sort()).toEqual(['services']);
    expect(await readFile(join(dataDir, 'services', 'new-pg', 'PG_VERSION'), 'utf8')).toBe('live\n');
    expect(runtime.openDisks.size).toBe(0);
    expect(deps.gate.paused()).toBe(false);
  });

  it('a daemon killed after the node swap, before the commit: the next run puts the node back first, then restores', async () => {
    const backup = await backupThenChange();
    const runtime = new FakeRuntime();
    const disk = await onWorker(runtime);
    const op = insertRestore(db, backup.id, new Date());
    // What a daemon that died there leaves: the node's live services/ aside, a half-restored one in place.
    await mkdir(join(disk, `.restore-${op.id}-node`), { recursive: true });
    await rename(join(disk, 'services'), join(disk, `.restore-${op.id}-node`, 'previous-services'));
    await mkdir(join(disk, 'services', 'half'), { recursive: true });
    updateRestore(db, op.id, { phase: 'swapping' });
    recoverRestores(db, dataDir, silentLogger);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'pending', attempts: 1 });
    await stepRestore(restoreDeps({ runtime }), op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'completed' });
    expect(await readdir(join(disk, 'services'))).toEqual(['old-pg']);
    expect((await readdir(disk)).sort()).toEqual(['services']);
  });

  it('a daemon killed mid-swap at its last allowed start: the node is put back, with the services off it meanwhile, then the restore fails', async () => {
    const backup = await backupThenChange();
    const runtime = new FakeRuntime({ images: ['pg'] });
    const disk = await onWorker(runtime);
    const op = insertRestore(db, backup.id, new Date());
    await mkdir(join(disk, `.restore-${op.id}-node`), { recursive: true });
    await rename(join(disk, 'services'), join(disk, `.restore-${op.id}-node`, 'previous-services'));
    await mkdir(join(disk, 'services', 'half'), { recursive: true });
    // A service the reconcilers started since the start, on the half-swapped directory.
    await runtime.run({ name: 'svc-svc-new-pg', image: 'pg', labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'service' } });
    updateRestore(db, op.id, { phase: 'swapping', attempts: 2 });
    recoverRestores(db, dataDir, silentLogger);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'pending', attempts: 3 });
    const deps = restoreDeps({ runtime });
    await stepRestore(deps, op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'failed', code: 'restore_failed' });
    expect(getRestore(db, op.id)!.error).toMatch(/rolled back: svc stopped during it 3 times/);
    expect([...runtime.containers.values()].map((c) => c.spec.name)).not.toContain('svc-svc-new-pg');
    expect(await readFile(join(disk, 'services', 'new-pg', 'PG_VERSION'), 'utf8')).toBe('live on the worker\n');
    expect((await readdir(disk)).sort()).toEqual(['services']);
    expect(runtime.openDisks.size).toBe(0);
    expect(serviceNames()).toEqual(['new-pg']);
    expect(deps.gate.paused()).toBe(false);
    expect(deps.resyncs).toBe(1);
    const before = await snapshot();
    await stepRestore(deps, op.id);
    expect(await snapshot()).toEqual(before);
  });

  it('a daemon killed after the commit: the next step removes the staging on the node too, and the helper', async () => {
    const backup = await backupThenChange();
    const runtime = new FakeRuntime();
    const disk = await onWorker(runtime);
    const op = insertRestore(db, backup.id, new Date());
    await mkdir(join(disk, `.restore-${op.id}-node`, 'previous-services', 'new-pg'), { recursive: true });
    updateRestore(db, op.id, { phase: 'committed' });
    recoverRestores(db, dataDir, silentLogger);
    await stepRestore(restoreDeps({ runtime }), op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'completed' });
    expect((await readdir(disk)).sort()).toEqual(['services']);
    expect(runtime.openDisks.size).toBe(0);
  });

  it('an archive with only a dump of a service, going to a worker: refused (its dump is loaded from the manager)', async () => {
    const backup = await backupThenChange();
    // An archive of an older svc: dumps/old-pg.sql and no services/old-pg/.
    const unpackedDir = join(root, 'repack');
    await mkdir(unpackedDir);
    const { x, c } = await import('tar');
    await x({ file: join(backupDir, backup.filename), cwd: unpackedDir });
    await rm(join(unpackedDir, 'services', 'old-pg'), { recursive: true });
    await writeFile(join(unpackedDir, 'dumps', 'old-pg.sql'), 'SELECT 1;\n');
    await c({ file: join(backupDir, backup.filename), cwd: unpackedDir, gzip: true }, await readdir(unpackedDir));
    const runtime = new FakeRuntime();
    runtime.newServicesOn = w1;
    const op = insertRestore(db, backup.id, new Date());
    await stepRestore(restoreDeps({ runtime }), op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'failed', code: 'service_on_other_node' });
    expect(getRestore(db, op.id)!.error).toMatch(/only a dump of old-pg, which cannot be loaded on node worker-1/);
  });

  it('everything on the manager (one host, or no label): restored as before', async () => {
    const backup = await backupThenChange();
    const op = insertRestore(db, backup.id, new Date());
    await stepRestore(restoreDeps(), op.id);
    expect(getRestore(db, op.id)).toMatchObject({ phase: 'completed' });
    expect(await readFile(join(dataDir, 'services', 'old-pg', 'PG_VERSION'), 'utf8')).toBe('archived\n');
  });
});

describe('planRemoteData', () => {
  const w = { id: 'w1', hostname: 'w-1' };
  const m = { id: 'w2', hostname: 'w-2' };
  it.each([
    [{ live: [], restored: ['a'] }, { node: undefined }],
    [{ live: [], restored: [], newServicesOn: w }, { node: undefined }],
    [{ live: [], restored: ['a'], newServicesOn: w }, { node: w }],
    [{ live: [{ name: 'pg', node: w }], restored: [], newServicesOn: w }, { node: w }],
    [{ live: [{ name: 'pg', node: w }], restored: ['a'] }, /service pg is on node w-1, where services are no longer placed \(no node is labelled/],
    [{ live: [{ name: 'pg', node: m }], restored: ['a'], newServicesOn: w }, /service pg is on node w-2, where .*node w-1 is labelled/],
    [{ live: [], restored: ['a'], dumpsOnly: ['a'], newServicesOn: w }, /only a dump of a, which cannot be loaded on node w-1/],
    [{ live: [], restored: ['a'], dumpsOnly: ['a'] }, { node: undefined }],
  ] as [RemoteDataFacts, RegExp | object][])('%j', (facts, want) => {
    const got = planRemoteData(facts);
    if (want instanceof RegExp) expect('refusal' in got && got.refusal).toMatch(want);
    else expect(got).toEqual(want);
  });
});

describe('import operation', () => {
  const deps = () => ({ db, backupDir, log: silentLogger, now: () => new Date('2026-03-01T00:00:00Z'), changed: () => {} });

  it('checks an upload and publishes it as a completed import backup; a second pass changes nothing', async () => {
    const backup = await backupThenChange();
    const row = insertImport(db, new Date());
    await copyFile(join(backupDir, backup.filename), uploadOf(backupDir, row.id));
    updateImport(db, row.id, { status: 'checking', sizeBytes: 10 });
    await checkImport(deps(), row.id);
    const done = getImport(db, row.id)!;
    expect(done.status).toBe('completed');
    const published = listBackups(db).find((b) => b.id === done.backupId)!;
    expect(published).toMatchObject({ trigger: 'import', status: 'completed', filename: 'svc-backup-20260301-000000.tar.gz' });
    expect(existsSync(join(backupDir, published.filename))).toBe(true);
    expect(existsSync(uploadOf(backupDir, row.id))).toBe(false);
    const before = await snapshot();
    await checkImport(deps(), row.id);
    expect(await snapshot()).toEqual(before);
  });

  it('fails a bad archive with invalid_archive and removes the upload', async () => {
    const row = insertImport(db, new Date());
    await mkdir(backupDir, { recursive: true });
    await writeFile(uploadOf(backupDir, row.id), 'garbage, not gzip');
    updateImport(db, row.id, { status: 'checking', sizeBytes: 17 });
    await checkImport(deps(), row.id);
    expect(getImport(db, row.id)).toMatchObject({ status: 'failed', code: 'invalid_archive', backupId: null });
    expect(getImport(db, row.id)!.error).toMatch(/not a readable svc backup archive/);
    expect(await readdir(backupDir)).toEqual([]);
    expect(listBackups(db)).toHaveLength(0);
  });
});

describe('import of a copy from a backup target', () => {
  const deps = (download: (row: { id: number; sourceKey: string | null }, dest: string) => Promise<number>) => ({
    db, backupDir, log: silentLogger, now: () => new Date('2026-03-01T00:00:00Z'), changed: () => {}, download,
  });

  it('the reconciler fetches the copy, checks it and publishes it; once fetched, a later pass fetches nothing', async () => {
    const backup = await backupThenChange();
    const row = insertRemoteImport(db, new Date(), { targetId: 1, key: 'svc/svc-backup-20260101-000000.tar.gz.age' });
    const fetched: string[] = [];
    const download = async (r: { sourceKey: string | null }, dest: string) => {
      fetched.push(r.sourceKey!);
      await copyFile(join(backupDir, backup.filename), dest);
      return 4242;
    };
    await checkImport(deps(download), row.id);
    const done = getImport(db, row.id)!;
    expect(done).toMatchObject({ status: 'completed', sizeBytes: 4242 });
    expect(fetched).toEqual(['svc/svc-backup-20260101-000000.tar.gz.age']);
    expect(listBackups(db).find((b) => b.id === done.backupId)).toMatchObject({ trigger: 'import', status: 'completed', sizeBytes: 4242 });
    await checkImport(deps(download), row.id);
    expect(fetched).toHaveLength(1);
  });

  it('a fetch that fails settles the import with its code and leaves no file', async () => {
    const row = insertRemoteImport(db, new Date(), { targetId: 1, key: 'svc/svc-backup-20260101-000000.tar.gz.age' });
    const download = async () => {
      throw Object.assign(new Error('svc/svc-backup-20260101-000000.tar.gz.age did not decrypt whole'), { code: 'copy_corrupted' });
    };
    await checkImport(deps(download), row.id);
    expect(getImport(db, row.id)).toMatchObject({ status: 'failed', code: 'copy_corrupted', backupId: null });
    expect(await readdir(backupDir)).toEqual([]);
    expect(listBackups(db)).toHaveLength(0);
  });
});

async function waitForPhase(id: number, phase: string) {
  const { waitFor } = await import('../../support/wait.js');
  await waitFor(() => getRestore(db, id)?.phase === phase, { timeoutMs: 10_000 });
}
