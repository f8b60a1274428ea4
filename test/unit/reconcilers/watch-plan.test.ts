// Table tests of the watch's pure decisions (src/reconcilers/app/watch-plan.ts).
import { describe, expect, it } from 'vitest';
import { stoppedByEngineApi, judgeWatchProbe, planWatch, watchesOld } from '../../../src/reconcilers/app/watch-plan.js';
import type { AppFacts, DeployFacts, WatchFacts } from '../../../src/reconcilers/app/plan.js';

const app = (over: Partial<AppFacts> = {}): AppFacts => ({
  id: 7, exists: true, appType: 'managed', liveContainerName: 'svc-web-2', currentDeployId: 2, healFailures: 0, healNotBeforeMs: null, replicas: 1, liveAddress: '172.30.0.2', ...over,
});
const watch = (over: Partial<WatchFacts> = {}): WatchFacts => ({ id: 2, step: 'watch', watchUntilMs: 60_000, watched: 'svc-web-2', kept: 'svc-web-1', ...over });
const pending: DeployFacts = { id: 3, status: 'pending', step: null, stagingContainer: null, previousContainer: null };
const running = [{ name: 'svc-web-2', running: true }];

describe('planWatch', () => {
  it('probes a running watched container inside the window', () => {
    expect(planWatch(app(), watch(), undefined, running, 1_000)).toEqual({ kind: 'watch_probe', deployId: 2 });
  });
  it('flips back when the watched container exited on its own or was killed for memory', () => {
    const exited = (over: object) => [{ name: 'svc-web-2', running: false, exitCode: 1, stoppedFromOutside: false, ...over }];
    expect(planWatch(app(), watch(), undefined, exited({}), 1_000)).toEqual({ kind: 'flip_back_begin', deployId: 2, reason: 'svc-web-2 exited with code 1' });
    expect(planWatch(app(), watch(), undefined, exited({ exitCode: 0 }), 1_000)).toMatchObject({ kind: 'flip_back_begin', reason: 'svc-web-2 exited with code 0' });
    expect(planWatch(app(), watch(), undefined, exited({ exitCode: 137, oomKilled: true }), 1_000)).toMatchObject({ reason: 'svc-web-2 was killed for memory (OOMKilled)' });
    // OOMKilled wins over a kill: the kernel's verdict is about the version.
    expect(planWatch(app(), watch(), undefined, exited({ exitCode: 137, oomKilled: true, stoppedFromOutside: true }), 1_000)).toMatchObject({ kind: 'flip_back_begin' });
  });
  it('leaves a container removed or stopped through the engine\'s API to self-healing (no decision)', () => {
    expect(planWatch(app(), watch(), undefined, [], 1_000)).toBeUndefined(); // docker rm -f: gone
    expect(planWatch(app(), watch(), undefined, [{ name: 'svc-web-2', running: false, removing: true }], 1_000)).toBeUndefined();
    expect(planWatch(app(), watch(), undefined, [{ name: 'svc-web-2', running: false, exitCode: 137, stoppedFromOutside: true }], 1_000)).toBeUndefined();
  });
  it('a Swarm drain of a node holding the watched version is no verdict on it: no flip-back, self-healing moves it (issue 35)', () => {
    // Swarm shut the task down (exit 0 on SIGTERM): the runtime reports it stopped from outside.
    const drained = { running: false, exitCode: 0, stoppedFromOutside: true };
    expect(planWatch(app(), watch(), undefined, [{ name: 'svc-web-2', ...drained }], 1_000)).toBeUndefined();
    expect(planWatch(app(), watch(), undefined, [...running, { name: 'svc-web-2-r1', ...drained }], 1_000)).toEqual({ kind: 'watch_probe', deployId: 2 });
    // Its replacement placed and starting on another node is no exit either.
    expect(planWatch(app(), watch(), undefined, [{ name: 'svc-web-2', running: false, starting: true }], 1_000)).toBeUndefined();
    expect(planWatch(app(), watch(), undefined, [...running, { name: 'svc-web-2-r1', running: false, starting: true }], 1_000)).toEqual({ kind: 'watch_probe', deployId: 2 });
    // A replica that exited by itself still flips the app back.
    expect(planWatch(app(), watch(), undefined, [...running, { name: 'svc-web-2-r1', running: false, exitCode: 0 }], 1_000)).toMatchObject({ kind: 'flip_back_begin', reason: 'svc-web-2-r1 exited with code 0' });
  });
  it('closes the window at its end, for a newer deploy, or when the watched container is no longer live', () => {
    expect(planWatch(app(), watch(), undefined, running, 60_000)).toMatchObject({ kind: 'end_watch', why: 'the window is over' });
    expect(planWatch(app(), watch(), pending, running, 1_000)).toMatchObject({ kind: 'end_watch', why: 'deploy 3 supersedes it' });
    expect(planWatch(app({ liveContainerName: 'svc-web-9' }), watch(), undefined, running, 1_000)).toMatchObject({ kind: 'end_watch' });
  });
  it('a flip-back under way finishes first, even past the window and with a newer deploy queued', () => {
    expect(planWatch(app(), watch({ step: 'flip_back' }), pending, [], 90_000)).toEqual({ kind: 'flip_back_step', deployId: 2, step: 'flip_back' });
    expect(planWatch(app(), watch({ step: 'flip_stop' }), undefined, [], 0)).toEqual({ kind: 'flip_back_step', deployId: 2, step: 'flip_stop' });
  });
});

describe('judgeWatchProbe', () => {
  const base = { nowMs: 0, watchUntilMs: 60_000 };
  it.each([
    [200, 0, { kind: 'ok', afterMs: 1_000 }],
    [302, 2, { kind: 'ok', afterMs: 1_000 }],
    [500, 0, { kind: 'wait', afterMs: 1_000 }],
    [undefined, 1, { kind: 'wait', afterMs: 1_000 }],
    [503, 2, { kind: 'flip_back', reason: '3 health probes in a row failed (last: HTTP 503)' }],
    [undefined, 2, { kind: 'flip_back', reason: '3 health probes in a row failed (last: no HTTP answer)' }],
  ])('HTTP %s after %i failures', (httpStatus, failuresBefore, verdict) => {
    expect(judgeWatchProbe({ ...base, httpStatus, failuresBefore })).toEqual(verdict);
  });
  it('the last probe comes at the window end', () => {
    expect(judgeWatchProbe({ httpStatus: 200, failuresBefore: 0, nowMs: 59_600, watchUntilMs: 60_000 })).toEqual({ kind: 'ok', afterMs: 400 });
  });
});

describe('watchesOld', () => {
  const base = { watchMs: 60_000, previousContainer: 'svc-web-1', previousDeployId: 1, trigger: 'manual' };
  it('only with a window, a previous container and a previous deploy of ours', () => {
    expect(watchesOld(base)).toBe(true);
    expect(watchesOld({ ...base, trigger: 'webhook' })).toBe(true);
    expect(watchesOld({ ...base, watchMs: 0 })).toBe(false);
    expect(watchesOld({ ...base, previousContainer: null })).toBe(false);
    expect(watchesOld({ ...base, previousContainer: 'legacy', previousDeployId: null })).toBe(false);
  });
  it('never for a rollback: the version it replaced was rejected by its user', () => {
    expect(watchesOld({ ...base, trigger: 'rollback' })).toBe(false);
  });
});

describe('stoppedByEngineApi', () => {
  it('a kill in the latest run means someone stopped it through the engine; an exit of its own has none', () => {
    expect(stoppedByEngineApi(['start', 'kill', 'die'])).toBe(true); // docker kill
    expect(stoppedByEngineApi(['start', 'kill', 'kill', 'die', 'stop'])).toBe(true); // docker stop past its grace
    expect(stoppedByEngineApi(['start', 'die'])).toBe(false); // a crash, or exit 0
    expect(stoppedByEngineApi(['start', 'oom', 'die'])).toBe(false);
    expect(stoppedByEngineApi(['kill', 'die', 'start', 'die'])).toBe(false); // the kill was of the run before the heal
    expect(stoppedByEngineApi(['kill', 'die'])).toBe(true); // its start is older than the history asked for
  });
});

describe('planWatch with replicas', () => {
  const up = { name: 'svc-web-2', running: true };
  it.each([
    ['a sibling exited on its own', { name: 'svc-web-2-r1', running: false, exitCode: 1 }, { kind: 'flip_back_begin', deployId: 2, reason: 'svc-web-2-r1 exited with code 1' }],
    ['a sibling killed for memory', { name: 'svc-web-2-r2', running: false, exitCode: 137, oomKilled: true }, { kind: 'flip_back_begin', deployId: 2, reason: 'svc-web-2-r2 was killed for memory (OOMKilled)' }],
    ['a sibling stopped from outside', { name: 'svc-web-2-r1', running: false, exitCode: 137, stoppedFromOutside: true }, { kind: 'watch_probe', deployId: 2 }],
    ['a sibling being removed', { name: 'svc-web-2-r1', running: false, removing: true }, { kind: 'watch_probe', deployId: 2 }],
    ['a sibling running', { name: 'svc-web-2-r1', running: true }, { kind: 'watch_probe', deployId: 2 }],
    ['another app version stopped', { name: 'svc-web-1-r1', running: false, exitCode: 1 }, { kind: 'watch_probe', deployId: 2 }],
  ])('%s', (_what, sibling, want) => {
    expect(planWatch(app(), watch(), undefined, [up, sibling], 5_000)).toEqual(want);
  });
});
