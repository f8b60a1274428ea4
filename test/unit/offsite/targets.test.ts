// Target commands: field rules (400 with the field named), a taken name (409), credentials sealed at rest
// and never in the API shape, an update that leaves the secret alone when it is not sent.
import { describe, expect, it } from 'vitest';
import { createTarget, deleteTarget, importRemote, targetConfig, updateTarget } from '../../../src/desired/backup-targets.js';
import { getImport } from '../../../src/store/backup-ops.js';
import { createLogger } from '../../../src/log.js';
import { parseConfig } from '../../../src/config.js';
import { getTarget } from '../../../src/store/offsite.js';
import { memoryDb, recordingEnqueue, testKey, testSealer } from '../../support/db.js';
import { targetJson } from '../../../src/presenters/backups.js';

const ctx = () => ({ db: memoryDb(), sealer: testSealer(), log: createLogger('error', {}, () => {}), enqueue: recordingEnqueue(), config: parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64') }) });
const body = { name: 'r2', endpoint: 'https://acc.r2.cloudflarestorage.com/', region: 'auto', bucket: 'svc-backups', prefix: 'prod/', access_key: 'AKIA1234', secret_key: 's3cr3t-value' };

describe('backup target commands', () => {
  it('creates a target with sealed credentials, shown only as a hint', () => {
    const c = ctx();
    const row = createTarget(c, body, 'api');
    expect(row.credentials).not.toContain('s3cr3t-value');
    expect(row.endpoint).toBe('https://acc.r2.cloudflarestorage.com');
    const json = targetJson(row, c.sealer);
    expect(JSON.stringify(json)).not.toContain('s3cr3t');
    expect(json.access_key_hint).toBe('…1234');
    expect(targetConfig(c, row)).toMatchObject({ accessKey: 'AKIA1234', secretKey: 's3cr3t-value' });
  });

  it.each([
    [{ name: 'Bad Name' }, 'name'],
    [{ bucket: 'A' }, 'bucket'],
    [{ endpoint: 'https://user:pw@host' }, 'endpoint'],
    [{ endpoint: 'https://host/path' }, 'endpoint'],
    [{ prefix: '/abs/' }, 'prefix'],
    [{ prefix: 'no-slash' }, 'prefix'],
    [{ secret_key: '' }, 'secret_key'],
    [{ extra: 1 }, ''],
  ])('refuses %j', (over, field) => {
    const c = ctx();
    expect(() => createTarget(c, { ...body, ...over }, 'api')).toThrow(expect.objectContaining({ kind: 'invalid', message: expect.stringContaining(field) }));
    expect(getTarget(c.db, 1)).toBeUndefined();
  });

  it('refuses a taken name; an update without secret_key keeps it; delete forgets the target', () => {
    const c = ctx();
    const row = createTarget(c, body, 'api');
    expect(() => createTarget(c, body, 'api')).toThrow(expect.objectContaining({ kind: 'conflict' }));
    const next = updateTarget(c, row.id, { bucket: 'other-bucket', endpoint: '' }, 'api');
    expect(next).toMatchObject({ bucket: 'other-bucket', endpoint: null });
    expect(targetConfig(c, next).secretKey).toBe('s3cr3t-value');
    deleteTarget(c, row.id, 'api');
    expect(getTarget(c.db, row.id)).toBeUndefined();
    expect(() => deleteTarget(c, row.id, 'api')).toThrow(expect.objectContaining({ kind: 'not_found' }));
  });

  it('importing a copy only records an import row naming it and enqueues import:<id>; the store is not asked', () => {
    const base = ctx();
    const c = { ...base, config: parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64'), SVC_BACKUP_PASSPHRASE: 'correct horse battery' }) };
    // An endpoint nothing answers on: the request would fail if it fetched anything.
    const t = createTarget(c, { ...body, endpoint: 'http://127.0.0.1:9' }, 'api');
    const backups = { db: c.db, enqueue: c.enqueue, log: c.log, now: () => new Date('2026-03-01T00:00:00Z'), backupDir: '/nonexistent' };
    const row = importRemote({ ...c, backups }, t.id, { key: 'prod/svc-backup-20261125-020000.tar.gz.age' }, 'api');
    expect(getImport(c.db, row.id)).toMatchObject({ status: 'checking', sourceTargetId: t.id, sourceKey: 'prod/svc-backup-20261125-020000.tar.gz.age' });
    expect(c.enqueue.keys).toContain(`import:${row.id}`);
    // Refusals stay in the request and change nothing: a key outside the prefix, no passphrase.
    expect(() => importRemote({ ...c, backups }, t.id, { key: 'other/svc-backup-20261125-020000.tar.gz.age' }, 'api')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => importRemote({ ...base, backups }, t.id, { key: 'prod/svc-backup-20261125-020000.tar.gz.age' }, 'api')).toThrow(expect.objectContaining({ code: 'backup_key_missing' }));
    expect(getImport(c.db, row.id + 1)).toBeUndefined();
  });
});
