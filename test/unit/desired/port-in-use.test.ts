// 409 `port_in_use` (issue 18): an app whose listener would go on a port another process on the host
// holds is refused at create and update, naming the port, and nothing is written or enqueued. A port the
// app already has is not checked again; domain mode has no listener.
import { describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { createApp, updateApp } from '../../../src/desired/apps.js';
import { getAppByName } from '../../../src/store/apps.js';
import { apps } from '../../../src/store/schema/index.js';
import { DomainError } from '../../../src/errors.js';

const caught = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('no error');
};

describe('port_in_use', () => {
  const setup = () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const taken = new Set([2024]);
    return { db, enqueue, taken, ctx: commandCtx(db, { enqueue, portInUse: (p) => taken.has(p) }) };
  };

  it('create on a taken port: 409 naming the port, nothing written', () => {
    const { ctx, db, enqueue } = setup();
    const err = caught(() => createApp(ctx, { name: 'bad', fallback_port: 2024 }, 'api'));
    expect(err).toBeInstanceOf(DomainError);
    expect([err.kind, err.code, err.details]).toEqual(['conflict', 'port_in_use', { field: 'fallback_port', port: 2024 }]);
    expect(err.message).toMatch(/port 2024 is already in use/);
    expect(db.select().from(apps).all()).toEqual([]);
    expect(enqueue.keys).toEqual([]);
    // Domain mode opens no listener: the same port as a stored fallback is fine.
    createApp(ctx, { name: 'site', access_mode: 'domain', domain: 'a.example.com', fallback_port: 2024 }, 'api');
  });

  it('update onto a taken port: 409, the app unchanged; a port the app already has is not checked again', () => {
    const { ctx, db, enqueue, taken } = setup();
    const web = createApp(ctx, { name: 'web', fallback_port: 8080 }, 'api');
    enqueue.keys.length = 0;
    expect(caught(() => updateApp(ctx, web.id, { fallback_port: 2024 }, 'api')).code).toBe('port_in_use');
    expect(getAppByName(db, 'web')!.fallbackPort).toBe(8080);
    expect(enqueue.keys).toEqual([]);
    // Its own port, taken since (by the proxy or anyone): other fields still change.
    taken.add(8080);
    updateApp(ctx, web.id, { branch: 'next' }, 'api');
    expect(getAppByName(db, 'web')!.branch).toBe('next');
    // From domain mode to a taken port: refused too.
    const site = createApp(ctx, { name: 'site', access_mode: 'domain', domain: 'a.example.com' }, 'api');
    expect(caught(() => updateApp(ctx, site.id, { access_mode: 'port', fallback_port: 2024 }, 'api')).code).toBe('port_in_use');
  });

  it('another app on the port is the plain conflict (uniqueness first)', () => {
    const { ctx, taken } = setup();
    createApp(ctx, { name: 'one', fallback_port: 9000 }, 'api');
    taken.add(9000);
    expect(caught(() => createApp(ctx, { name: 'two', fallback_port: 9000 }, 'api')).code).toBe('conflict');
  });
});
