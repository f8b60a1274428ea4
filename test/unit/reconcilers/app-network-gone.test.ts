// The instance's network removed behind svc's back while the app's containers were stopped (issue 35,
// defect 6): the engine can never start those containers again (they keep the old network's id), so the
// heal makes the network again and recreates them from their deploy, uncounted, with no error recorded.
import { describe, expect, it } from 'vitest';
import { listAppEvents } from '../../../src/store/deploys.js';
import { readInstances } from '../../../src/observed/apps.js';
import { listDeployEvents } from '../../../src/store/deploys.js';
import { AppHarness, APP_SETTINGS } from '../../support/app-harness.js';

const running = (h: AppHarness) => [...h.rt.containers.values()].filter((c) => c.state === 'running').map((c) => c.spec.name).sort();

describe('a network removed behind svc', () => {
  it('the live container is recreated on the network made again, in one pass, uncounted', async () => {
    const h = new AppHarness();
    await h.deployed();
    const before = h.rt.containers.get('svc-web-1')!;
    h.rt.kill('svc-web-1', 0);
    h.rt.removeNetwork(APP_SETTINGS.network);
    await h.drive();
    const after = h.rt.containers.get('svc-web-1')!;
    expect(after.state).toBe('running');
    expect(after.id).not.toBe(before.id);
    expect(after.spec).toEqual(before.spec);
    expect(h.rt.networks.has(APP_SETTINGS.network)).toBe(true);
    expect(h.app()).toMatchObject({ status: 'active', healFailures: 0 });
    expect(h.dnsNow()).toMatchObject({ 'web.svc.internal.': after.address });
    const events = listAppEvents(h.db, h.app().id);
    expect(events.map((e) => [e.level, e.message])).toEqual([['warn', `network ${APP_SETTINGS.network} of live container svc-web-1 was gone; network and container made again`]]);
    await h.expectSteady();
  });

  it('stopped replicas are removed and created again from the live deploy, uncounted', async () => {
    const h = new AppHarness();
    h.makeApp('web', { replicas: 3 });
    await h.deployed('web:1');
    await h.drive();
    for (const name of ['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']) h.rt.kill(name, 0);
    h.rt.removeNetwork(APP_SETTINGS.network);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(readInstances(h.db, h.app().id).map((r) => [r.slot, r.healFailures, r.address !== null])).toEqual([[1, 0, true], [2, 0, true]]);
    expect(h.app()).toMatchObject({ status: 'active', healFailures: 0 });
    expect(listAppEvents(h.db, h.app().id).filter((e) => e.level === 'error')).toEqual([]);
    await h.expectSteady();
  });

  it('a flip-back to a kept container whose network is gone makes both again and flips back (not the failed version healed)', async () => {
    const h = new AppHarness({ ...APP_SETTINGS, watchMs: 60_000 });
    await h.deployed('web:1');
    const second = await h.deployed('web:2');
    expect(h.rt.containers.get('svc-web-1')?.state).toBe('exited'); // kept for the window
    h.rt.removeNetwork(APP_SETTINGS.network);
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', error: 'svc-web-2 exited with code 1' });
    expect(h.app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1', imageRef: 'web:1' });
    const kept = h.rt.containers.get('svc-web-1')!;
    expect([kept.state, kept.spec.image]).toEqual(['running', 'web:1']);
    expect(h.rt.containers.has('svc-web-2')).toBe(false);
    expect(h.dnsNow()).toMatchObject({ 'web.svc.internal.': kept.address });
    expect(listDeployEvents(h.db, second.id).map((e) => e.message)).toContain(`network ${APP_SETTINGS.network} of the kept container svc-web-1 was gone; network and container made again`);
    await h.expectSteady();
  });

  it('a stop_first deploy that fails brings the old version back made again when its network went meanwhile', async () => {
    const h = new AppHarness();
    h.makeApp('web', { deployStrategy: 'stop_first' });
    const first = await h.deployed('web:1');
    const bad = h.deploy('web:bad');
    await h.drive(undefined, { until: () => h.dep(bad.id).step === 'health_check' });
    expect(h.rt.containers.get('svc-web-1')?.state).toBe('exited');
    h.rt.removeNetwork(APP_SETTINGS.network);
    await h.drive(undefined, { until: () => h.dep(bad.id).status === 'auto_rollback' });
    await h.drive();
    expect(h.rt.containers.get('svc-web-1')).toMatchObject({ state: 'running', spec: { image: 'web:1' } });
    expect(h.app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1', currentDeployId: first.id, healFailures: 0 });
    await h.expectSteady();
  });
});
