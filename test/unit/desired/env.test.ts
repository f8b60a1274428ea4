import { describe, it, expect, beforeEach } from 'vitest';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { createApp, deleteEnv, setEnv } from '../../support/commands.js';
import { missingRequired, resolveEnv } from '../../../src/store/env.js';
import type { Db } from '../../../src/store/db.js';

let db: Db;
let appId: number;
const sealer = testSealer();
const enqueue = recordingEnqueue();
beforeEach(() => {
  db = memoryDb();
  appId = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'git').id;
});

describe('resolveEnv', () => {
  it('returns every variable decrypted, including empty ones', () => {
    setEnv(db, sealer, enqueue, appId, { key: 'PLAIN', value: 'p' }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'SECRET', value: 's3', isSecret: true }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'EMPTY', value: '', isSecret: true }, null);
    expect(resolveEnv(db, sealer, appId)).toEqual({ EMPTY: '', PLAIN: 'p', SECRET: 's3' });
    deleteEnv(db, enqueue, appId, 'PLAIN', null);
    expect(resolveEnv(db, sealer, appId)).toEqual({ EMPTY: '', SECRET: 's3' });
  });
});

describe('missingRequired', () => {
  it('lists required keys with no or an empty value, secret or not, sorted', () => {
    setEnv(db, sealer, enqueue, appId, { key: 'Z_SET', value: 'v', required: true }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'B_EMPTY', value: '', required: true }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'A_SECRET_EMPTY', required: true, isSecret: true }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'C_SECRET_SET', value: 'x', required: true, isSecret: true }, null);
    setEnv(db, sealer, enqueue, appId, { key: 'OPTIONAL', value: '' }, null);
    expect(missingRequired(db, appId)).toEqual(['A_SECRET_EMPTY', 'B_EMPTY']);
    setEnv(db, sealer, enqueue, appId, { key: 'A_SECRET_EMPTY', value: 'now set' }, null);
    expect(missingRequired(db, appId)).toEqual(['B_EMPTY']);
  });
});

describe('setEnv', () => {
  it('an update without a value keeps the stored one (manifests never carry secret values)', () => {
    setEnv(db, sealer, enqueue, appId, { key: 'S', value: 'kept', isSecret: true }, 'git');
    const { created } = setEnv(db, sealer, enqueue, appId, { key: 'S', required: true }, 'git');
    expect(created).toBe(false);
    expect(resolveEnv(db, sealer, appId)).toEqual({ S: 'kept' });
    expect(missingRequired(db, appId)).toEqual([]);
  });
});
