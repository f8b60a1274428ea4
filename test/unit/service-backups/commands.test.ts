// The per-service backup commands (src/desired/service-backups.ts) on :memory: SQLite: what each refuses
// (a clear 4xx that changes nothing) and what it writes and enqueues.
import { beforeEach, describe, expect, it } from 'vitest';
import { backupService, deleteServiceBackup, restoreService, setBackupPolicy } from '../../../src/desired/service-backups.js';
import { observeService } from '../../../src/observed/services.js';
import { getServiceByName } from '../../../src/store/services.js';
import { policyOf, serviceBackupsOf, serviceRestoresOf, settleServiceBackup } from '../../../src/store/service-backups.js';
import type { Db } from '../../../src/store/db.js';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { commandCtx, createService } from '../../support/commands.js';
import { dbRows as dbSnapshot } from '../../support/db-snapshot.js';
import { insertWithFreeName } from '../../../src/store/backups.js';

let db: Db;
let enqueue: ReturnType<typeof recordingEnqueue>;
const config = { dataDir: '/tmp/svc-sbk-unit', images: {}, instance: 'svc' };
const ctx = () => commandCtx(db, { enqueue, config: config as never });

function active(name: string, type = 'postgres', version?: string) {
  const s = createService(db, testSealer(), enqueue, config, { name, type, version });
  observeService(db, s.id, { status: 'active' });
  return getServiceByName(db, name)!;
}

beforeEach(() => {
  db = memoryDb();
  enqueue = recordingEnqueue();
});

describe('backupService', () => {
  it('writes a running record and enqueues its key', () => {
    const s = active('pg');
    const b = backupService(ctx(), s.id, 'api');
    expect(b).toMatchObject({ serviceId: s.id, serviceName: 'pg', trigger: 'manual', status: 'running', version: '18' });
    expect(b.filename).toMatch(new RegExp(`^svc-pg-\\d{8}-\\d{6}-${b.id}\\.sql\\.gz$`));
    expect(enqueue.keys).toContain(`service-backup:${b.id}`);
  });

  it.each([
    ['a service not active yet', () => createService(db, testSealer(), enqueue, config, { name: 'new', type: 'postgres' }).id, /is pending/],
    ['a garage (no per-service backups yet)', () => active('s3', 'garage').id, /garage services have no per-service backups/],
    ['while one of it is being taken', () => { const s = active('pg2'); backupService(ctx(), s.id, 'api'); return s.id; }, /is being taken/],
  ])('refuses %s (409), writing nothing', (_what, make, msg) => {
    const id = make();
    const before = dbSnapshot(db);
    expect(() => backupService(ctx(), id, 'api')).toThrow(expect.objectContaining({ kind: 'conflict', message: expect.stringMatching(msg) }));
    expect(dbSnapshot(db)).toEqual(before);
  });
});

describe('setBackupPolicy', () => {
  it('sets and keeps what is not given', () => {
    const s = active('pg');
    expect(policyOf(db, s.id)).toEqual({ intervalMinutes: 0, retain: 7 });
    expect(setBackupPolicy(ctx(), s.id, { interval_minutes: 60 })).toEqual({ interval_minutes: 60, retain: 7 });
    expect(setBackupPolicy(ctx(), s.id, { retain: 3 })).toEqual({ interval_minutes: 60, retain: 3 });
    expect(enqueue.keys).toContain('service-backup:schedule');
  });
  it.each([[{ interval_minutes: -1 }], [{ retain: 0 }], [{ every: 5 }], [{ interval_minutes: '60' }]])('refuses %j (400)', (body) => {
    const s = active('pg');
    const before = dbSnapshot(db);
    expect(() => setBackupPolicy(ctx(), s.id, body)).toThrow(expect.objectContaining({ kind: 'invalid' }));
    expect(dbSnapshot(db)).toEqual(before);
  });
});

describe('restoreService', () => {
  const completed = (serviceId: number) => {
    const b = backupService(ctx(), serviceId, 'api');
    settleServiceBackup(db, b.id, { sizeBytes: 10 });
    return b;
  };

  it('into the service: a restore that begins with a safety backup', () => {
    const s = active('pg');
    const b = completed(s.id);
    const { restore, service } = restoreService(ctx(), s.id, { backup_id: b.id }, 'api');
    expect(restore).toMatchObject({ backupId: b.id, serviceId: s.id, intoNew: false, step: 'safety', status: 'running' });
    expect(service.id).toBe(s.id);
    expect(enqueue.keys).toContain(`service-backup:restore-${restore.id}`);
  });

  it('into a new service: a service of the same type and version, waited for', () => {
    const s = active('pg', 'postgres', '16');
    const b = completed(s.id);
    const { restore, service } = restoreService(ctx(), s.id, { backup_id: b.id, into: { name: 'pg-copy' } }, 'api');
    expect(service).toMatchObject({ name: 'pg-copy', type: 'postgres', version: '16' });
    expect(restore).toMatchObject({ serviceId: service.id, intoNew: true, step: 'wait_target' });
    expect(serviceRestoresOf(db, s.id)).toEqual([]);
  });

  it.each([
    ['another service’s backup (404)', (s: number, o: number) => ({ id: s, body: { backup_id: completed(o).id } }), 'not_found', /backup/],
    ['a backup still running', (s: number) => ({ id: s, body: { backup_id: backupService(ctx(), s, 'api').id } }), 'conflict', /only a completed backup/],
    ['while another restore of it runs', (s: number) => { const b = completed(s); restoreService(ctx(), s, { backup_id: b.id }, 'api'); return { id: s, body: { backup_id: b.id } }; }, 'conflict', /restore \d+ into service pg is running/],
    ['a copy under a name that is taken', (s: number, o: number) => { void o; return { id: s, body: { backup_id: completed(s).id, into: { name: 'other' } } }; }, 'conflict', /taken|exists/],
    ['a body with unknown fields', (s: number) => ({ id: s, body: { backup_id: completed(s).id, force: true } }), 'invalid', /./],
  ])('refuses %s, writing nothing', (_what, make, kind, msg) => {
    const s = active('pg');
    const o = active('other');
    const { id, body } = make(s.id, o.id);
    const before = dbSnapshot(db);
    expect(() => restoreService(ctx(), id, body, 'api')).toThrow(expect.objectContaining({ kind, message: expect.stringMatching(msg) }));
    expect(dbSnapshot(db)).toEqual(before);
  });
});

describe('deleteServiceBackup', () => {
  it('refuses a running backup and one a running restore uses', () => {
    const s = active('pg');
    const running = backupService(ctx(), s.id, 'api');
    expect(() => deleteServiceBackup(ctx(), s.id, running.id, 'api')).toThrow(expect.objectContaining({ kind: 'conflict' }));
    settleServiceBackup(db, running.id, { sizeBytes: 1 });
    restoreService(ctx(), s.id, { backup_id: running.id }, 'api');
    expect(() => deleteServiceBackup(ctx(), s.id, running.id, 'api')).toThrow(expect.objectContaining({ kind: 'conflict', message: expect.stringMatching(/used by restore/) }));
  });
  it('drops a finished one and enqueues the sweep', () => {
    const s = active('pg');
    const b = backupService(ctx(), s.id, 'api');
    settleServiceBackup(db, b.id, { error: 'dump failed' });
    deleteServiceBackup(ctx(), s.id, b.id, 'api');
    expect(serviceBackupsOf(db, s.id)).toEqual([]);
    expect(enqueue.keys).toContain('service-backup:files');
  });
});

describe('restoreService from a full-state backup', () => {
  const full = (status: 'completed' | 'running' = 'completed') => insertWithFreeName(db, new Date(), { status, trigger: 'manual' });

  it('takes the dump out of the archive as a `full_backup` record, then restores it into the service', () => {
    const s = active('pg');
    const f = full();
    const { restore } = restoreService(ctx(), s.id, { full_backup_id: f.id }, 'api');
    const [b] = serviceBackupsOf(db, s.id);
    expect(b).toMatchObject({ trigger: 'full_backup', fullBackupId: f.id, status: 'running' });
    expect(restore).toMatchObject({ backupId: b.id, step: 'safety', intoNew: false });
    expect(enqueue.keys).toEqual(expect.arrayContaining([`service-backup:${b.id}`, `service-backup:restore-${restore.id}`]));
  });

  it.each([
    ['both ids', (s: number, f: number) => ({ id: s, body: { backup_id: 1, full_backup_id: f } }), 'invalid'],
    ['neither', (s: number) => ({ id: s, body: {} }), 'invalid'],
    ['into a new service (the dump carries passwords)', (s: number, f: number) => ({ id: s, body: { full_backup_id: f, into: { name: 'copy' } } }), 'conflict'],
    ['a full backup still running', (s: number) => ({ id: s, body: { full_backup_id: full('running').id } }), 'conflict'],
    ['a redis service (no dump in a full backup)', (_s: number, f: number) => ({ id: active('cache', 'redis').id, body: { full_backup_id: f } }), 'conflict'],
  ])('refuses %s, writing nothing', (_what, make, kind) => {
    const s = active('pg');
    const { id, body } = make(s.id, full().id);
    const before = dbSnapshot(db);
    expect(() => restoreService(ctx(), id, body, 'api')).toThrow(expect.objectContaining({ kind }));
    expect(dbSnapshot(db)).toEqual(before);
  });
});
