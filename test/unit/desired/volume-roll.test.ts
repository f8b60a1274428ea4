// A change of volumes rolls the app (issue 22): the reason in words, when a roll is needed, and the apps
// command queueing a deploy of the live image (trigger `roll`) with events that say why.
import { describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { createApp, updateApp } from '../../../src/desired/apps.js';
import { needsRoll, volumeChange } from '../../../src/desired/volume-roll.js';
import { createDeploy, listAppEvents, listDeployEvents, listDeploys, updateDeploy } from '../../../src/store/deploys.js';
import { observeApp } from '../../../src/observed/apps.js';

describe('volumeChange', () => {
  const a = { name: 'a', mount_path: '/a' };
  it('says what was added, moved and removed; nothing for the same mounts in another order', () => {
    expect(volumeChange([a], [a])).toBeUndefined();
    expect(volumeChange([a, { name: 'b', mount_path: '/b' }], [{ name: 'b', mount_path: '/b' }, a])).toBeUndefined();
    expect(volumeChange([], [a])).toBe('volume a added at /a');
    expect(volumeChange([a], [{ name: 'a', mount_path: '/srv/a' }])).toBe('volume a moved from /a to /srv/a');
    expect(volumeChange([a], [])).toBe('volume a (/a) removed (its files are kept)');
  });
});

describe('needsRoll', () => {
  const live = { liveDeployId: 3, replicas: 1 };
  it.each([
    ['nothing live', { liveDeployId: null, replicas: 1 }, undefined, false],
    ['stopped at 0 replicas', { liveDeployId: 3, replicas: 0 }, undefined, false],
    ['live, no deploy open', live, undefined, true],
    ['a deploy queued (it makes new containers)', live, { status: 'pending', step: null }, false],
    ['a deploy still pulling', live, { status: 'running', step: 'pull' }, false],
    ['a deploy past its create step (queued behind it)', live, { status: 'running', step: 'health_check' }, true],
  ] as const)('%s', (_what, app, active, want) => expect(needsRoll(app, active)).toBe(want));
});

describe('the apps command', () => {
  const setup = () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const ctx = commandCtx(db, { enqueue });
    const app = createApp(ctx, { name: 'web', image_ref: 'img/web:v1', fallback_port: 9200, deploy_strategy: 'stop_first', volumes: [{ name: 'data', mount_path: '/data' }] }, 'api');
    return { db, ctx, enqueue, app };
  };
  const goLive = (s: ReturnType<typeof setup>, image = 'img/web:v1') => {
    const d = createDeploy(s.db, s.enqueue, undefined, { appId: s.app.id, appName: 'web', imageRef: image, trigger: 'manual' });
    updateDeploy(s.db, undefined, d.id, { status: 'success', step: 'finalize' });
    observeApp(s.db, s.app.id, { liveDeployId: d.id });
    return d;
  };

  it('rolls a live app whose volumes change: a deploy of the live image, with the reason as events', () => {
    const s = setup();
    const live = goLive(s, 'img/web:v7');
    updateApp(s.ctx, s.app.id, { volumes: [{ name: 'data', mount_path: '/srv/data' }, { name: 'logs', mount_path: '/logs' }] }, 'ui');
    const [roll] = listDeploys(s.db, s.app.id);
    expect(roll).toMatchObject({ trigger: 'roll', origin: 'ui', status: 'pending', imageRef: 'img/web:v7' });
    expect(roll.id).not.toBe(live.id);
    const why = 'volume data moved from /data to /srv/data; volume logs added at /logs: the running containers mount the old list, so the live image img/web:v7 is deployed again (stop_first)';
    expect(listDeployEvents(s.db, roll.id).map((e) => [e.step, e.message])).toEqual([['roll', why]]);
    expect(listAppEvents(s.db, s.app.id).map((e) => e.message)).toEqual([`deploy #${roll.id}: ${why}`]);
    expect(s.enqueue.keys).toContain('app:web');
    // The same list again (another order, or another field changed): no second roll.
    updateApp(s.ctx, s.app.id, { volumes: [{ name: 'logs', mount_path: '/logs' }, { name: 'data', mount_path: '/srv/data' }], branch: 'dev' }, 'api');
    expect(listDeploys(s.db, s.app.id)).toHaveLength(2);
  });

  it('does not roll an app that runs nothing, or one whose queued deploy will mount the new list', () => {
    const s = setup();
    updateApp(s.ctx, s.app.id, { volumes: [] }, 'api');
    expect(listDeploys(s.db, s.app.id)).toEqual([]);
    goLive(s);
    createDeploy(s.db, s.enqueue, undefined, { appId: s.app.id, appName: 'web', imageRef: 'img/web:v2', trigger: 'manual' });
    updateApp(s.ctx, s.app.id, { volumes: [{ name: 'data', mount_path: '/data' }] }, 'api');
    expect(listDeploys(s.db, s.app.id).map((d) => d.trigger)).toEqual(['manual', 'manual']);
    // Stopped (0 replicas): the next start makes new containers anyway.
    const t = setup();
    goLive(t);
    updateApp(t.ctx, t.app.id, { replicas: 0, deploy_strategy: 'blue_green' }, 'api');
    updateApp(t.ctx, t.app.id, { volumes: [] }, 'api');
    expect(listDeploys(t.db, t.app.id).map((d) => d.trigger)).toEqual(['manual']);
  });

  it('a refused change rolls nothing', () => {
    const s = setup();
    goLive(s);
    expect(() => updateApp(s.ctx, s.app.id, { volumes: [{ name: 'x', mount_path: '/' }] }, 'api')).toThrow();
    expect(() => updateApp(s.ctx, s.app.id, { volumes: [{ name: 'x', mount_path: '/x' }], replicas: 3 }, 'api')).toThrow(); // stop_first with 3 replicas
    expect(listDeploys(s.db, s.app.id)).toHaveLength(1);
  });
});
