// Issue 35 defect 5: a crash-loop alert closes whatever ended the loop. Through the real app reconciler (fake
// engine, fake clock, real SQLite): the crashing container replaced by a deploy or a rollback, the app scaled
// to 0, the app deleted; each ends in one `app_recovered` after the one `app_crashing`. Plus the pure decision
// (crash-alert.ts) as a table.
import { describe, expect, it } from 'vitest';
import { AppHarness } from '../../support/app-harness.js';
import { commandCtx } from '../../support/commands.js';
import { createChannel } from '../../../src/desired/notify.js';
import { deleteApp, updateApp } from '../../../src/desired/apps.js';
import { desc } from 'drizzle-orm';
import { listOutbox } from '../../../src/store/notify.js';
import { notifyOutbox } from '../../../src/store/schema/index.js';
import { crashAlertVerdict, type CrashAlertFacts } from '../../../src/reconcilers/app/crash-alert.js';

/** Crashes the live container `times` times, each right after its restart (never 10 s up). */
async function crash(h: AppHarness, times: number) {
  const name = h.app().liveContainerName!;
  for (let i = 0; i < times; i++) {
    h.rt.kill(name);
    await h.drive('web', { until: () => h.rt.containers.get(name)?.state === 'running' });
  }
  return name;
}

/** A deployed app whose live container keeps crashing, its alert sent, and a channel that hears both events. */
async function crashing(h: AppHarness, images = ['web:1']) {
  createChannel(commandCtx(h.db, { sealer: h.sealer }), { name: 'chat', type: 'slack', events: ['app_crashing', 'app_recovered'], config: { url: 'http://127.0.0.1:9/hook' } }, 'api');
  for (const image of images) await h.deployed(image);
  const name = await crash(h, 3);
  expect(listOutbox(h.db).map((r) => r.event)).toEqual(['app_crashing']);
  return name;
}

const events = (h: AppHarness) => listOutbox(h.db).map((r) => r.event).reverse(); // oldest first
/** The newest queued message as stored (its message text too). */
const last = (h: AppHarness) => h.db.select().from(notifyOutbox).orderBy(desc(notifyOutbox.id)).get()!;

describe('the crash alert closes whatever ended the loop', () => {
  it('a good deploy replaces the crashing container: app_recovered once it has stayed up 10 s', async () => {
    const h = new AppHarness();
    const old = await crashing(h);
    const d = h.deploy('web:2');
    await h.drive('web', { until: () => h.dep(d.id).status === 'success' });
    expect(h.app().liveContainerName).not.toBe(old);
    expect(events(h)).toEqual(['app_crashing']); // not yet: the new container has not stayed up
    await h.drive();
    expect(events(h)).toEqual(['app_crashing', 'app_recovered']);
    expect(last(h)).toMatchObject({ subject: 'web recovered' });
    expect(last(h).message).toBe(`web serves again: its live container ${h.app().liveContainerName} (deploy ${d.id}) has stayed up 10 s. Self-healing is back to normal.`);
    await h.expectSteady();
    await h.drive();
    expect(events(h)).toHaveLength(2);
  });

  it('a rollback replaces it the same way', async () => {
    const h = new AppHarness();
    await crashing(h, ['web:1', 'web:2']);
    const d = h.deploy('web:1', 'rollback');
    await h.drive('web', { until: () => h.dep(d.id).status === 'success' });
    await h.drive();
    expect(events(h)).toEqual(['app_crashing', 'app_recovered']);
    expect(last(h).message).toContain(`(deploy ${d.id})`);
    await h.expectSteady();
  });

  it('scaled to 0: closed once nothing of it runs', async () => {
    const h = new AppHarness();
    await crashing(h);
    updateApp(commandCtx(h.db, { sealer: h.sealer, enqueue: h.enqueue }), h.app().id, { replicas: 0 }, 'api');
    await h.drive();
    expect([...h.rt.containers.values()].filter((c) => c.state === 'running')).toEqual([]);
    expect(events(h)).toEqual(['app_crashing', 'app_recovered']);
    expect(last(h)).toMatchObject({ subject: 'web recovered: scaled to 0' });
    await h.expectSteady();
  });

  it('deleted: closed when its containers go, named by the app it was', async () => {
    const h = new AppHarness();
    await crashing(h);
    deleteApp(commandCtx(h.db, { sealer: h.sealer, enqueue: h.enqueue }), h.app().id, 'api');
    await h.drive();
    expect(h.rt.containers.size).toBe(0);
    expect(events(h)).toEqual(['app_crashing', 'app_recovered']);
    expect(last(h)).toMatchObject({ subject: 'web recovered: deleted', link: null });
    await h.drive();
    expect(events(h)).toHaveLength(2);
  });

  it('a deploy that does not pass leaves the alert open (the old container keeps crashing)', async () => {
    const h = new AppHarness();
    await crashing(h);
    h.rt.behaviour.set('web:bad', 'exits');
    const d = h.deploy('web:bad');
    await h.drive('web', { until: () => h.dep(d.id).status === 'auto_rollback' });
    await crash(h, 2);
    expect(events(h)).toEqual(['app_crashing']);
  });
});

describe('crashAlertVerdict', () => {
  const base: CrashAlertFacts = { alertOpen: true, deleted: false, replicas: 1, live: { running: true, upMs: 10_000 } };
  const cases: [string, Partial<CrashAlertFacts>, ReturnType<typeof crashAlertVerdict>][] = [
    ['no open alert: nothing to close', { alertOpen: false }, { kind: 'none' }],
    ['no open alert, deleted: nothing to close', { alertOpen: false, deleted: true }, { kind: 'none' }],
    ['live container up 10 s (healed or a new deploy)', {}, { kind: 'resolve', why: 'serves' }],
    ['up 4 s: look again in 6 s', { live: { running: true, upMs: 4_000 } }, { kind: 'wait', afterMs: 6_000 }],
    ['not running (crashed, in backoff)', { live: { running: false, upMs: 0 } }, { kind: 'none' }],
    ['no live container yet', { live: null }, { kind: 'none' }],
    ['scaled to 0, its container gone', { replicas: 0, live: null }, { kind: 'resolve', why: 'scaled_to_zero' }],
    ['scaled to 0, its container stopped', { replicas: 0, live: { running: false, upMs: 0 } }, { kind: 'resolve', why: 'scaled_to_zero' }],
    ['scaled to 0, still being stopped', { replicas: 0 }, { kind: 'none' }],
    ['deleted', { deleted: true, live: null }, { kind: 'resolve', why: 'deleted' }],
  ];
  it.each(cases)('%s', (_, over, expected) => {
    expect(crashAlertVerdict({ ...base, ...over })).toEqual(expected);
  });
});
