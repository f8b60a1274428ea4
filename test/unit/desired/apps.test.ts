import { describe, it, expect } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { createApp, createAppRecord, deleteApp, updateApp, updateAppRecord } from '../../../src/desired/apps.js';
import { uniqueFieldOf } from '../../../src/desired/app-rules.js';
import { getAppByName } from '../../../src/store/apps.js';
import { apps } from '../../../src/store/schema/index.js';
import { DomainError } from '../../../src/errors.js';

const setup = () => {
  const db = memoryDb();
  const enqueue = recordingEnqueue();
  return { db, enqueue, ctx: commandCtx(db, { enqueue }) };
};

describe('apps command', () => {
  it('records the owner given by the caller (REST or a manifest source)', () => {
    const { ctx, db, enqueue } = setup();
    createAppRecord(ctx, { name: 'from-dir', fallbackPort: 9000 }, 'dir', 'manifest');
    createApp(ctx, { name: 'from-api', access_mode: 'domain', domain: 'x.example.com' }, 'api');
    expect(getAppByName(db, 'from-dir')!.owner).toBe('dir');
    expect(getAppByName(db, 'from-api')!.owner).toBe('rest');
    expect(enqueue.keys).toEqual(['app:from-dir', 'jobs:from-dir', 'proxy:main', 'app:from-api', 'jobs:from-api', 'proxy:main']);
  });

  it('validates the API-shaped input itself: a bad field is `invalid` with the issue, nothing written', () => {
    const { ctx, db, enqueue } = setup();
    const err = (() => {
      try {
        createApp(ctx, { name: 'Bad Name', fallback_port: 9000 }, 'ui');
      } catch (e) {
        return e;
      }
    })() as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect(err.kind).toBe('invalid');
    expect(err.details?.issues).toEqual([expect.objectContaining({ path: 'name' })]);
    expect(db.select().from(apps).all()).toEqual([]);
    expect(enqueue.keys).toEqual([]);
  });

  it('refuses the ports svc itself listens on, computed from config, whoever calls', () => {
    const { ctx } = setup();
    for (const port of [ctx.config.port, ctx.config.proxy.httpPort, ctx.config.proxy.httpsPort, ctx.config.proxy.dnsPort]) {
      expect(() => createApp(ctx, { name: `p${port}`, fallback_port: port }, 'api')).toThrow(expect.objectContaining({ kind: 'invalid', message: expect.stringMatching(/used by svc itself/) }));
      expect(() => createAppRecord(ctx, { name: `m${port}`, fallbackPort: port }, 'dir', 'manifest')).toThrow(expect.objectContaining({ kind: 'invalid' }));
    }
  });

  it('a UNIQUE violation from a concurrent writer still surfaces as a conflict naming the field', () => {
    const { ctx, db } = setup();
    const a = createAppRecord(ctx, { name: 'a', fallbackPort: 9000 }, 'rest', 'api');
    let caught: unknown;
    try {
      db.insert(apps).values({ name: 'b', fallbackPort: 9000 }).run();
    } catch (err) {
      caught = err;
    }
    expect(uniqueFieldOf(caught)).toBe('fallback_port');
    expect(uniqueFieldOf(new Error('other'))).toBeUndefined();
    expect(() => updateAppRecord(ctx, a.id, { fallbackPort: ctx.config.port }, 'api')).toThrow(DomainError);
  });

  it('an update enqueues the proxy only when a routing field changed', () => {
    const { ctx, enqueue } = setup();
    const a = createAppRecord(ctx, { name: 'a', fallbackPort: 9000 }, 'rest', 'api');
    enqueue.keys.length = 0;
    updateAppRecord(ctx, a.id, { branch: 'next', healthCheckPath: '/up', fallbackPort: 9000 }, 'api');
    expect(enqueue.keys).toEqual(['app:a', 'jobs:a']);
    for (const patch of [{ fallbackPort: 9001 }, { internalPort: 8080 }, { accessMode: 'domain' as const, domain: 'a.example.com' }, { domain: 'b.example.com' }]) {
      enqueue.keys.length = 0;
      updateAppRecord(ctx, a.id, patch, 'api');
      expect(enqueue.keys, JSON.stringify(patch)).toEqual(['app:a', 'jobs:a', 'proxy:main']);
    }
  });

  it('the name is immutable through update', () => {
    const { ctx } = setup();
    const a = createApp(ctx, { name: 'a', fallback_port: 9000 }, 'api');
    expect(() => updateApp(ctx, a.id, { name: 'b' }, 'ui')).toThrow(expect.objectContaining({ kind: 'invalid', message: expect.stringMatching(/immutable/) }));
  });

  it('update and delete of an unknown id are not_found', () => {
    const { ctx, enqueue } = setup();
    expect(() => updateApp(ctx, 5, { branch: 'x' }, 'api')).toThrow(expect.objectContaining({ kind: 'not_found' }));
    expect(() => deleteApp(ctx, 5, 'api')).toThrow(expect.objectContaining({ kind: 'not_found' }));
    expect(enqueue.keys).toEqual([]);
  });
});
