import { describe, it, expect } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { perDb } from '../../../src/store/prepared.js';
import { getApp, getAppByName } from '../../../src/store/apps.js';
import type { Db } from '../../../src/store/db.js';
import { createApp, updateApp } from '../../support/commands.js';

describe('perDb', () => {
  it('builds once per database and keeps databases apart', () => {
    const built: Db[] = [];
    const q = perDb((db) => (built.push(db), { db }));
    const a = memoryDb();
    const b = memoryDb();
    expect(q(a)).toBe(q(a));
    expect(q(b).db).toBe(b);
    expect(built).toEqual([a, b]);
  });

  it('prepared reads see every later write, on each database', () => {
    const a = memoryDb();
    const b = memoryDb();
    const app = createApp(a, recordingEnqueue(), { name: 'web', fallbackPort: 9000 }, 'rest');
    expect(getAppByName(a, 'web')!.fallbackPort).toBe(9000);
    expect(getAppByName(b, 'web')).toBeUndefined();
    updateApp(a, recordingEnqueue(), app.id, { fallbackPort: 9001 });
    expect(getApp(a, app.id)!.fallbackPort).toBe(9001);
    expect(getApp(a, app.id + 1)).toBeUndefined();
  });
});
