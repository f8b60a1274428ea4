// Target commands: field rules (400 with the field named), a taken name (409), credentials sealed at rest
// and never in the API shape, an update that leaves the secret alone when it is not sent.
import { describe, expect, it } from 'vitest';
import { createTarget, deleteTarget, targetConfig, updateTarget } from '../../../src/desired/backup-targets.js';
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
});
