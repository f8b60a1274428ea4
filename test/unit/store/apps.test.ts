import { describe, it, expect } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { createApp, deleteApp, getAppByName, updateApp } from '../../../src/store/apps.js';
import { uniqueFieldOf } from '../../../src/store/app-rules.js';
import { apps } from '../../../src/store/schema/index.js';
import { ApiError } from '../../../src/errors.js';

describe('apps store', () => {
  it('records the owner given by the caller (REST or a manifest source)', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    createApp(db, enqueue, { name: 'from-dir', fallbackPort: 9000 }, 'dir');
    createApp(db, enqueue, { name: 'from-api', accessMode: 'domain', domain: 'x.example.com' }, 'rest');
    expect(getAppByName(db, 'from-dir')!.owner).toBe('dir');
    expect(getAppByName(db, 'from-api')!.owner).toBe('rest');
    expect(enqueue.keys).toEqual(['app:from-dir', 'proxy:main', 'app:from-api', 'proxy:main']);
  });

  it('a UNIQUE violation from a concurrent writer still surfaces as a 409 naming the field', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const a = createApp(db, enqueue, { name: 'a', fallbackPort: 9000 }, 'rest');
    let caught: unknown;
    try {
      db.insert(apps).values({ name: 'b', fallbackPort: 9000 }).run();
    } catch (err) {
      caught = err;
    }
    expect(uniqueFieldOf(caught)).toBe('fallback_port');
    expect(uniqueFieldOf(new Error('other'))).toBeUndefined();
    expect(() => updateApp(db, enqueue, a.id, { fallbackPort: 70000 }, { reservedPorts: [70000] })).toThrow(ApiError);
  });

  it('an update enqueues the proxy only when a routing field changed', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const a = createApp(db, enqueue, { name: 'a', fallbackPort: 9000 }, 'rest');
    enqueue.keys.length = 0;
    updateApp(db, enqueue, a.id, { branch: 'next', healthCheckPath: '/up', fallbackPort: 9000 });
    expect(enqueue.keys).toEqual(['app:a']);
    for (const patch of [{ fallbackPort: 9001 }, { internalPort: 8080 }, { accessMode: 'domain' as const, domain: 'a.example.com' }, { domain: 'b.example.com' }]) {
      enqueue.keys.length = 0;
      updateApp(db, enqueue, a.id, patch);
      expect(enqueue.keys, JSON.stringify(patch)).toEqual(['app:a', 'proxy:main']);
    }
  });

  it('update and delete of an unknown id are 404', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    expect(() => updateApp(db, enqueue, 5, { branch: 'x' })).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => deleteApp(db, enqueue, 5)).toThrow(expect.objectContaining({ status: 404 }));
    expect(enqueue.keys).toEqual([]);
  });
});
