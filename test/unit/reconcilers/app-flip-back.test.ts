// The watch after the switch (API.md "Watch after the switch (flip-back)") on the fake runtime and clock:
// the old container is kept stopped for the window, the new one probed every second, and an exit or three
// failed probes flip back; a newer deploy, a rollback, deleting the app or the window's end close it.
import { beforeEach, describe, expect, it } from 'vitest';
import { AppHarness, APP_SETTINGS, DRAINED_STEPS } from '../../support/app-harness.js';
import { drainMinWaitMs } from '../../../src/reconcilers/app/plan.js';
import { MAX_STEP_STARTS } from '../../../src/reconcilers/app/attempts.js';

import { listAppEvents, listDeployEvents } from '../../../src/store/deploys.js';
import { deployJson } from '../../../src/presenters/deploy-json.js';
import { deleteApp } from '../../support/commands.js';

const WATCH_MS = 60_000;
const FLIP_STEPS = [...DRAINED_STEPS, 'watch', 'route_update', 'stop_old', 'finalize'];
let h: AppHarness;

beforeEach(() => {
  h = new AppHarness({ ...APP_SETTINGS, watchMs: WATCH_MS });
});

/** web:1 live, then web:2 switched in and watched; returns both deploys. */
async function watchedSecondDeploy() {
  const first = await h.deployed('web:1');
  const second = await h.deployed('web:2');
  return { first, second };
}

const state = (name: string) => h.rt.containers.get(name)?.state;

describe('watch after the switch', () => {
  it('a first deploy has nothing to flip back to and is not watched', async () => {
    const d = await h.deployed('web:1');
    await h.drive();
    expect(h.dep(d.id)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect(deployJson(h.dep(d.id)).watch_until).toBeNull();
    await h.expectSteady();
  });

  it('a healthy deploy: old container drained, then stopped but kept, new one probed every second, kept one removed when the window ends', async () => {
    const { second } = await watchedSecondDeploy();
    // The window opens at the switch (the deploy's success), not when the old version's drain ended.
    const finishedAt = h.dnsCalls.find((c) => c.records['web.svc.internal.'] === '10.0.0.3')!.at;
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: 'watch', watchUntil: new Date(finishedAt + WATCH_MS).toISOString() });
    expect(deployJson(h.dep(second.id)).watch_until).toBe(new Date(finishedAt + WATCH_MS).toISOString());
    expect(h.steps(second.id)).toEqual(DRAINED_STEPS);
    expect(listDeployEvents(h.db, second.id)[8].message).toMatch(/^old container svc-web-1 stopped and kept for the 60 s watch window: its connections ended after /);
    expect(state('svc-web-1')).toBe('exited');

    const probesBefore = h.probed.length;
    await h.drive(undefined, { until: () => h.now >= finishedAt + WATCH_MS / 2 });
    expect(state('svc-web-1')).toBe('exited'); // still kept mid-window
    await h.drive();
    const watchProbes = h.probed.slice(probesBefore).filter((u) => u === 'http://10.0.0.3:3000/healthz').length;
    expect(watchProbes).toBeGreaterThanOrEqual(57); // from the drain's end (about a second after the switch) on
    expect(watchProbes).toBeLessThanOrEqual(61);
    expect(h.rt.containers.has('svc-web-1')).toBe(false);
    expect(h.timed.find((t) => t.method === 'remove' && t.name === 'svc-web-1' && t.at > finishedAt)!.at).toBe(finishedAt + WATCH_MS);
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect(h.steps(second.id)).toEqual(DRAINED_STEPS);
    expect(h.app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-2', imageRef: 'web:2' });
    await h.expectSteady();
  });

  it('the new container exits inside the window: flip back to the kept one instead of healing, deploy auto_rollback', async () => {
    const { first, second } = await watchedSecondDeploy();
    const watchedFrom = h.now;
    await h.drive(undefined, { until: () => h.now >= watchedFrom + 5_000 });
    h.rt.kill('svc-web-2', 1);
    const exitAt = h.now;
    await h.drive();

    // Served by the old version again, at once: the kept container started and probed, then the switch.
    const back = h.dnsCalls.find((c) => c.at >= exitAt && c.records['web.svc.internal.'] === h.rt.containers.get('svc-web-1')!.address)!;
    expect(back.at - exitAt).toBeLessThan(100);
    expect(h.timed.filter((t) => t.name === 'svc-web-1' && t.at >= exitAt).map((t) => t.method)).toEqual(['start']);
    expect(state('svc-web-1')).toBe('running');
    expect(h.rt.containers.has('svc-web-2')).toBe(false);
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', step: null, watchUntil: null, error: 'svc-web-2 exited with code 1' });
    expect(h.steps(second.id)).toEqual(FLIP_STEPS);
    const events = listDeployEvents(h.db, second.id).slice(DRAINED_STEPS.length);
    expect(events.map((e) => e.level)).toEqual(['warn', 'info', 'info', 'error']);
    expect(events[0].message).toBe('svc-web-2 exited with code 1 during the watch window; flipping back to svc-web-1');
    expect(events[2].message).toBe('failed container svc-web-2 stopped and removed');
    expect(h.app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1', currentDeployId: first.id, imageRef: 'web:1', healFailures: 0 });
    const appEvents = listAppEvents(h.db, h.app().id);
    expect(appEvents.map((e) => e.step)).toEqual(['flip_back']); // no `heal`: flip-back wins
    expect(appEvents[0].message).toBe('flipped back from svc-web-2 to svc-web-1: svc-web-2 exited with code 1');
    expect(h.dnsNow()).toEqual({ 'web.svc.internal.': h.rt.containers.get('svc-web-1')!.address });
    await h.expectSteady();
  });

  it('the new container starts failing its probe: three failures in a row flip back; it is stopped after the proxy re-resolved', async () => {
    const { first, second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 10 });
    h.probeAnswer.set('web:2', 500);
    const failingFrom = h.now;
    await h.drive();

    const cut = h.dnsCalls.find((c) => c.at >= failingFrom && c.records['web.svc.internal.'] === h.rt.containers.get('svc-web-1')!.address)!.at;
    expect(cut - failingFrom).toBeGreaterThanOrEqual(2_000); // three probes, a second apart
    expect(cut - failingFrom).toBeLessThanOrEqual(3_000);
    const stop = h.timed.find((t) => t.method === 'stop' && t.name === 'svc-web-2')!;
    expect(stop.at - cut).toBe(drainMinWaitMs(APP_SETTINGS.dnsRefreshMs));
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', watchUntil: null });
    expect(h.dep(second.id).error).toBe('svc-web-2 failed: 3 health probes in a row failed (last: HTTP 500)');
    expect(h.steps(second.id)).toEqual(FLIP_STEPS);
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-1', currentDeployId: first.id, imageRef: 'web:1', status: 'active' });
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-1']);
    await h.expectSteady();
  });

  it('a failed probe followed by a good one does not count towards a flip-back', async () => {
    const { second } = await watchedSecondDeploy();
    const probes = (n: number) => {
      const target = h.probed.length + n;
      return h.drive(undefined, { until: () => h.probed.length >= target });
    };
    for (let round = 0; round < 5; round++) {
      h.probeAnswer.set('web:2', 503);
      await probes(2);
      h.probeAnswer.delete('web:2');
      await probes(1);
    }
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: 'watch' });
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'success', watchUntil: null });
  });

  it('a newer deploy ends the window (kept container removed first) and is itself watched', async () => {
    const { second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    const third = h.deploy('web:1');
    await h.drive(undefined, { until: () => h.dep(third.id).status === 'success' });
    expect(h.dep(second.id)).toMatchObject({ status: 'success', watchUntil: null, step: null });
    const removedKept = h.timed.find((t) => t.method === 'remove' && t.name === 'svc-web-1' && t.at > 0)!;
    const thirdRun = h.timed.find((t) => t.method === 'run' && t.name === 'svc-web-3')!;
    expect(h.timed.indexOf(removedKept)).toBeLessThan(h.timed.indexOf(thirdRun));
    expect(h.dep(third.id)).toMatchObject({ previousContainer: 'svc-web-2', step: 'watch' });
    expect([...h.rt.containers.keys()].sort()).toEqual(['svc-web-2', 'svc-web-3']);
    await h.drive();
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-3']);
    await h.expectSteady();
  });

  it('a rollback ends the window the same way', async () => {
    const { second } = await watchedSecondDeploy();
    const rb = h.deploy('web:1', 'rollback');
    await h.drive();
    expect(h.dep(second.id).watchUntil).toBeNull();
    expect(h.dep(rb.id).status).toBe('success');
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-3', imageRef: 'web:1' });
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-3']);
  });

  it('deleting the app inside the window removes the kept container too', async () => {
    await watchedSecondDeploy();
    deleteApp(h.db, h.enqueue, h.app().id);
    await h.drive();
    expect(h.rt.containers.size).toBe(0);
    await h.expectSteady('web', { dnsSyncs: true });
  });

  it('a daemon restart inside the window still flips back', async () => {
    const { first, second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    h.rec = h.makeReconciler(); // the restarted daemon: same database and engine, no memory
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', watchUntil: null });
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-1', currentDeployId: first.id, imageRef: 'web:1' });
    await h.expectSteady();
  });

  it('a flip-back while the old version still drains: it serves again as it is (no start), its connections stay, its drain ends', async () => {
    const first = await h.deployed('web:1');
    h.upstream = () => new Map([['10.0.0.2:3000', 1]]); // a WebSocket on the old version that never ends
    const second = h.deploy('web:2');
    await h.drive(undefined, { until: () => h.dep(second.id).status === 'success' });
    expect(h.dep(second.id).drainUntil).not.toBeNull();
    h.now += 5_000;
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', drainUntil: null, drainFrom: null });
    expect(h.rt.callsOf('start')).toEqual([]);
    expect(h.timed.filter((t) => t.name === 'svc-web-1' && t.method === 'stop')).toEqual([]);
    expect(state('svc-web-1')).toBe('running');
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-1', currentDeployId: first.id });
    expect(listDeployEvents(h.db, second.id).some((e) => e.message === 'old container svc-web-1 serves again (flip-back): its drain ends and its connections stay')).toBe(true);
    await h.expectSteady();
  });

  it('a daemon restart in the middle of the flip-back finishes it once', async () => {
    const { second } = await watchedSecondDeploy();
    h.probeAnswer.set('web:1', null); // the kept container takes a while to answer
    h.rt.kill('svc-web-2', 1);
    await h.drive(undefined, { until: () => h.dep(second.id).step === 'flip_back' && h.probed.length > 3 });
    h.rec = h.makeReconciler();
    h.probeAnswer.delete('web:1');
    await h.drive();
    expect(h.dep(second.id).status).toBe('auto_rollback');
    expect(h.steps(second.id)).toEqual(FLIP_STEPS);
    expect(h.rt.callsOf('start')).toEqual([['svc-web-1']]);
    await h.expectSteady();
  });

  it('a flip-back step that every daemon died in ends after MAX_STEP_STARTS daemons instead of resuming for ever', async () => {
    const { second } = await watchedSecondDeploy();
    h.probeAnswer.set('web:1', null); // the kept container never answers: the step stays flip_back
    h.rt.kill('svc-web-2', 1);
    await h.drive(undefined, { until: () => h.dep(second.id).step === 'flip_back' });
    for (let process = 1; process <= MAX_STEP_STARTS; process++) {
      h.rec = h.makeReconciler(); // a new daemon, which "dies" after one pass of the step
      await h.rec.reconcile('web');
      expect(h.dep(second.id)).toMatchObject({ step: 'flip_back', attemptStep: 'flip_back', stepAttempts: process });
    }
    h.rec = h.makeReconciler();
    h.probeAnswer.delete('web:1');
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect(listDeployEvents(h.db, second.id).at(-1)).toMatchObject({ step: 'watch', level: 'error', message: expect.stringContaining(`begun ${MAX_STEP_STARTS} times`) });
    expect(state('svc-web-1')).toBeUndefined(); // the kept container is gone; the new one is healed instead
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-2', status: 'active' });
    await h.expectSteady();
  });

  it('kept container gone: nothing to flip to, the window closes and self-healing restarts the new one', async () => {
    const { second } = await watchedSecondDeploy();
    h.rt.containers.delete('svc-web-1');
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'success', watchUntil: null, error: null });
    expect(listDeployEvents(h.db, second.id).at(-1)).toMatchObject({ step: 'watch', level: 'error' });
    expect(listAppEvents(h.db, h.app().id).map((e) => e.step)).toEqual(['heal']);
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-2', status: 'active' });
    await h.expectSteady();
  });

  it('window 0: the old container is removed after its drain, as before', async () => {
    h = new AppHarness({ ...APP_SETTINGS, watchMs: 0 });
    const { second } = await watchedSecondDeploy();
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect(listDeployEvents(h.db, second.id)[8].message).toMatch(/^old container svc-web-1 stopped and removed: /);
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-2']);
    h.rt.kill('svc-web-2');
    await h.drive();
    expect(listAppEvents(h.db, h.app().id).map((e) => e.step)).toEqual(['heal']);
    await h.expectSteady();
  });
});

// Issue 17 section 5: only an exit of the watched container's own (or OOMKilled) or failed probes flip
// back; a container someone stopped, killed or removed through the engine's API is healed, and a rollback
// deploy is not watched at all.
describe('what flips back and what is healed inside the window', () => {
  /** The window runs on; the deploy stays a success and svc-web-2 serves again, healed by `how`. */
  async function expectHealedNotFlipped(secondId: number, how: RegExp) {
    // Healed, then (its probe passed) back in the answer.
    await h.drive(undefined, { until: () => listAppEvents(h.db, h.app().id).length > 0 && state('svc-web-2') === 'running' && h.app().liveAddress !== null });
    expect(h.dep(secondId)).toMatchObject({ status: 'success', step: 'watch', error: null });
    expect(listAppEvents(h.db, h.app().id).map((e) => [e.step, e.message])).toEqual([['heal', expect.stringMatching(how)]]);
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-2', imageRef: 'web:2', status: 'active' });
    expect(h.dnsNow()).toEqual({ 'web.svc.internal.': h.rt.containers.get('svc-web-2')!.address });
    expect(state('svc-web-1')).toBe('exited'); // still kept: the window is not over
    await h.drive(); // to the window's end
    expect(h.dep(secondId)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-2']);
    await h.expectSteady();
  }

  it('docker kill of the watched container: healed (restarted), not flipped back', async () => {
    const { second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    h.rt.killFromOutside('svc-web-2');
    await expectHealedNotFlipped(second.id, /svc-web-2 was not running; restarted/);
  });

  it('docker stop of the watched container: healed, not flipped back', async () => {
    const { second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    await h.rt.stop('svc-web-2', 10);
    await expectHealedNotFlipped(second.id, /svc-web-2 was not running; restarted/);
  });

  it('docker rm -f of the watched container: recreated, not flipped back', async () => {
    const { second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    await h.rt.remove('svc-web-2');
    await expectHealedNotFlipped(second.id, /svc-web-2 was gone; recreated/);
  });

  it('a Swarm drain of the node holding the watched container (exit 0, no kill in the history): healed, not flipped back (issue 35)', async () => {
    const { second } = await watchedSecondDeploy();
    await h.drive(undefined, { until: () => h.probed.length > 5 });
    h.rt.shutDownBySwarm('svc-web-2');
    await expectHealedNotFlipped(second.id, /svc-web-2 was not running; restarted/);
  });

  it('killed for memory (OOMKilled): flipped back', async () => {
    const { first, second } = await watchedSecondDeploy();
    h.rt.oom('svc-web-2');
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', error: 'svc-web-2 was killed for memory (OOMKilled)' });
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-1', currentDeployId: first.id, imageRef: 'web:1' });
    await h.expectSteady();
  });

  it('an exit of its own with code 0: flipped back (no kill came from outside)', async () => {
    const { second } = await watchedSecondDeploy();
    h.rt.kill('svc-web-2', 0);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', error: 'svc-web-2 exited with code 0' });
    await h.expectSteady();
  });

  it('a kill before a heal does not excuse a later exit of its own in the same window', async () => {
    const { second } = await watchedSecondDeploy();
    h.rt.killFromOutside('svc-web-2');
    await h.drive(undefined, { until: () => state('svc-web-2') === 'running' });
    h.now += 1_000;
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id)).toMatchObject({ status: 'auto_rollback', error: 'svc-web-2 exited with code 1' });
    await h.expectSteady();
  });

  it('a rollback deploy is not watched: its live container dying is healed, the rolled-back-from version never returns', async () => {
    await watchedSecondDeploy();
    const rb = h.deploy('web:1', 'rollback');
    await h.drive(undefined, { until: () => h.dep(rb.id).status === 'success' && h.dep(rb.id).drainUntil === null });
    expect(h.dep(rb.id)).toMatchObject({ status: 'success', step: null, watchUntil: null });
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-3']); // the web:2 container is removed once drained, not kept
    h.rt.kill('svc-web-3', 1);
    await h.drive();
    expect(h.dep(rb.id)).toMatchObject({ status: 'success', error: null });
    expect(listAppEvents(h.db, h.app().id).map((e) => e.step)).toEqual(['heal']);
    expect(h.app()).toMatchObject({ liveContainerName: 'svc-web-3', imageRef: 'web:1', status: 'active' });
    await h.expectSteady();
  });
});
