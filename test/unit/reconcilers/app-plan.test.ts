import { DNS_REFRESH_MS } from '../../../src/proxy/config.js';
import { describe, it, expect } from 'vitest';
import {
  deriveAppStatus, drainMinWaitMs, envDiff, judgeDrain, judgeProbe, orphans, planApp,
  type AppFacts, type DeployFacts,
} from '../../../src/reconcilers/app/plan.js';
import { isLatest, mustPull } from '../../../src/reconcilers/app/images.js';
import { desiredRoutes, desiredDnsRecords } from '../../../src/reconcilers/proxy/routes.js';

const app = (over: Partial<AppFacts> = {}): AppFacts => ({
  id: 7, exists: true, appType: 'managed', liveContainerName: 'svc-web-1', currentDeployId: 1, healFailures: 0, healNotBeforeMs: null, replicas: 1, liveAddress: '172.30.0.2', ...over,
});
const deploy = (over: Partial<DeployFacts> = {}): DeployFacts => ({
  id: 2, status: 'running', step: 'health_check', stagingContainer: 'svc-web-2', previousContainer: 'svc-web-1', ...over,
});

describe('planApp', () => {
  it('advances a running deploy before anything else', () => {
    expect(planApp(app(), deploy(), [], 0)).toEqual({ kind: 'deploy_step', deployId: 2, step: 'health_check' });
    expect(planApp(app(), deploy({ step: null }), [], 0)).toEqual({ kind: 'deploy_step', deployId: 2, step: 'validate' });
  });
  it('begins a pending deploy', () => {
    expect(planApp(app(), deploy({ status: 'pending', step: null }), [], 0)).toEqual({ kind: 'begin_deploy', deployId: 2 });
  });
  it('is steady when the live container runs, or when nothing was ever deployed', () => {
    expect(planApp(app(), undefined, [{ name: 'svc-web-1', running: true }], 0)).toEqual({ kind: 'steady' });
    expect(planApp(app({ liveContainerName: null, currentDeployId: null }), undefined, [], 0)).toEqual({ kind: 'steady' });
    expect(planApp(app({ appType: 'external_service' }), undefined, [], 0)).toEqual({ kind: 'steady' });
  });
  it('heals a stopped or missing live container, after the backoff', () => {
    expect(planApp(app(), undefined, [{ name: 'svc-web-1', running: false }], 0)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: true });
    expect(planApp(app(), undefined, [], 0)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: false, listed: false });
    const stopped = [{ name: 'svc-web-1', running: false }];
    expect(planApp(app({ healNotBeforeMs: 5_000 }), undefined, stopped, 1_000)).toEqual({ kind: 'heal_wait', afterMs: 4_000 });
    expect(planApp(app({ healNotBeforeMs: 5_000 }), undefined, stopped, 5_000).kind).toBe('heal');
  });
  it('leaves a one-shot stack service that exited 0 alone (service_completed_successfully); heals it on any other exit', () => {
    expect(planApp(app({ runsOnce: true }), undefined, [{ name: 'svc-web-1', running: false, exitCode: 0 }], 0)).toEqual({ kind: 'steady' });
    expect(planApp(app({ runsOnce: true }), undefined, [{ name: 'svc-web-1', running: false, exitCode: 1 }], 0).kind).toBe('heal');
    expect(planApp(app(), undefined, [{ name: 'svc-web-1', running: false, exitCode: 0 }], 0).kind).toBe('heal');
  });
  it('recreates a live container that is gone or being removed at once, whatever the backoff (listed: the engine still lists it, its removal ends first)', () => {
    expect(planApp(app({ healNotBeforeMs: 5_000 }), undefined, [], 1_000)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: false, listed: false });
    const removing = [{ name: 'svc-web-1', running: false, removing: true }];
    expect(planApp(app({ healNotBeforeMs: 5_000 }), undefined, removing, 1_000)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: false, listed: true });
  });
});

describe('orphans', () => {
  const c = (name: string, deployId?: number) => ({ name, running: true, deployId });
  it('keeps the live, staging and draining containers, removes the rest', () => {
    const list = [c('svc-web-1', 1), c('svc-web-2', 2), c('svc-web-0', 0)];
    expect(orphans(app(), deploy(), list)).toEqual(['svc-web-0']);
    expect(orphans(app(), undefined, list)).toEqual(['svc-web-2', 'svc-web-0']);
  });
  it('keeps a half-made container of the running deploy for its own step to replace', () => {
    expect(orphans(app(), deploy({ stagingContainer: null, step: 'create' }), [c('svc-web-2', 2)])).toEqual([]);
  });
  it('removes the containers of a deleted app of the same name, even under a kept name', () => {
    const old = { name: 'svc-web-1', running: true, deployId: 1, appId: 3 };
    expect(orphans(app(), undefined, [old, { name: 'svc-web-4', running: true, deployId: 4, appId: 7 }])).toEqual(['svc-web-1', 'svc-web-4']);
    expect(orphans(app({ liveContainerName: 'svc-web-4' }), undefined, [{ name: 'svc-web-4', running: true, appId: 7 }])).toEqual([]);
  });
  it('removes everything of an app that no longer exists', () => {
    expect(orphans(app({ exists: false }), undefined, [c('a'), c('b')])).toEqual(['a', 'b']);
  });
});

describe('judgeProbe', () => {
  const base = { running: true, dockerHealth: 'none' as const, elapsedMs: 100, timeoutMs: 30_000 };
  it.each([
    [{ httpStatus: 200 }, 'healthy'],
    [{ httpStatus: 302 }, 'healthy'],
    [{ httpStatus: 500 }, 'wait'],
    [{ httpStatus: undefined }, 'wait'],
    [{ httpStatus: 200, dockerHealth: 'starting' as const }, 'wait'],
    [{ httpStatus: 200, dockerHealth: 'healthy' as const }, 'healthy'],
    [{ running: false, exitCode: 1 }, 'failed'],
    [{ httpStatus: 500, elapsedMs: 30_000 }, 'failed'],
  ])('%o -> %s', (over, kind) => {
    expect(judgeProbe({ ...base, ...over }).kind).toBe(kind);
  });
  it('polls fast at first, slower later, never past the deadline', () => {
    expect(judgeProbe({ ...base, elapsedMs: 10 })).toEqual({ kind: 'wait', afterMs: 25 });
    expect(judgeProbe({ ...base, elapsedMs: 5_000 })).toEqual({ kind: 'wait', afterMs: 100 });
    expect(judgeProbe({ ...base, elapsedMs: 29_900 })).toEqual({ kind: 'wait', afterMs: 100 });
  });
  it('says why it failed', () => {
    const v = judgeProbe({ ...base, httpStatus: 503, elapsedMs: 31_000 });
    expect(v).toEqual({ kind: 'failed', reason: 'health check did not pass within 30 s (HTTP 503)' });
  });
});

describe('judgeDrain', () => {
  const base = { dnsRefreshMs: 1_200, capMs: 10_000, inFlight: 0, zeroPolls: 2 };
  it('never stops before the proxy re-resolved (plus 50 ms); with the default refresh, 75 ms after the cut', () => {
    expect(drainMinWaitMs(DNS_REFRESH_MS)).toBe(75);
    expect(drainMinWaitMs(250)).toBe(300);
    expect(drainMinWaitMs(1_000)).toBe(1_050);
  });
  it('waits for the proxy to re-resolve, then for idle polls, capped', () => {
    expect(judgeDrain({ ...base, sinceCutMs: 100 })).toEqual({ kind: 'wait', afterMs: 1_150 });
    expect(judgeDrain({ ...base, sinceCutMs: 1_300 })).toEqual({ kind: 'stop' });
    expect(judgeDrain({ ...base, sinceCutMs: 1_300, zeroPolls: 1 })).toEqual({ kind: 'wait', afterMs: 50 });
    expect(judgeDrain({ ...base, sinceCutMs: 1_300, inFlight: 3 })).toEqual({ kind: 'wait', afterMs: 50 });
    expect(judgeDrain({ ...base, sinceCutMs: 10_000, inFlight: 3 })).toEqual({ kind: 'stop' });
  });
  it('open connections (streams, WebSockets) are polled fast for 2 s, then every second, never past the drain', () => {
    expect(judgeDrain({ ...base, sinceCutMs: 1_900, inFlight: 2 })).toEqual({ kind: 'wait', afterMs: 50 });
    expect(judgeDrain({ ...base, sinceCutMs: 2_000, inFlight: 2 })).toEqual({ kind: 'wait', afterMs: 1_000 });
    expect(judgeDrain({ ...base, sinceCutMs: 9_700, inFlight: 2 })).toEqual({ kind: 'wait', afterMs: 300 });
    // the connections ended: back to fast polls, so the stop follows within 3 of them
    expect(judgeDrain({ ...base, sinceCutMs: 5_000, inFlight: 0, zeroPolls: 0 })).toEqual({ kind: 'wait', afterMs: 50 });
  });
  it('drain_seconds 0 still waits for the proxy to re-resolve, then stops whatever is open', () => {
    expect(judgeDrain({ ...base, capMs: 0, sinceCutMs: 0, inFlight: 5 })).toEqual({ kind: 'wait', afterMs: 1_250 });
    expect(judgeDrain({ ...base, capMs: 0, sinceCutMs: 1_250, inFlight: 5 })).toEqual({ kind: 'stop' });
  });
});

describe('deriveAppStatus', () => {
  it.each([
    [true, 'success', 'active'],
    [true, 'auto_rollback', 'active'],
    [false, 'auto_rollback', 'error'],
    [true, 'failed', 'error'],
    [false, undefined, 'inactive'],
    [false, 'success', 'inactive'],
  ])('live=%s newest=%s -> %s', (live, newest, status) => {
    expect(deriveAppStatus(live as boolean, newest as string | undefined)).toBe(status);
  });
});

describe('envDiff', () => {
  it('lists keys only', () => {
    expect(envDiff({ A: '1', B: '2', C: '3' }, { A: '1', B: 'x', D: '4' })).toEqual({ added: ['D'], removed: ['C'], changed: ['B'] });
    expect(envDiff(undefined, { A: '1' })).toEqual({ added: ['A'], removed: [], changed: [] });
  });
});

describe('image references', () => {
  it.each([
    ['nginx', true], ['nginx:latest', true], ['nginx:1.25', false], ['localhost:5000/app', true],
    ['localhost:5000/app:v2', false], ['ghcr.io/o/app@sha256:abc', false],
  ])('%s latest=%s', (ref, latest) => {
    expect(isLatest(ref)).toBe(latest);
  });
  it('pulls latest always, others only when missing', () => {
    expect(mustPull('app:1', true)).toBe(false);
    expect(mustPull('app:1', false)).toBe(true);
    expect(mustPull('app:latest', true)).toBe(true);
  });
});

describe('desiredRoutes', () => {
  const row = { name: 'web', appType: 'managed' as const, accessMode: 'port' as const, domain: null, fallbackPort: 8080, internalPort: 3000, source: null, port: null };
  it('routes every app by its access mode, through DNS or a fixed URL', () => {
    expect(desiredRoutes([row])).toEqual([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'dns', name: 'web.svc.internal.', port: 3000 } }]);
    expect(desiredRoutes([{ ...row, accessMode: 'domain', domain: 'web.example.com' }])[0]).toMatchObject({ mode: 'domain', domain: 'web.example.com' });
    expect(desiredRoutes([{ ...row, appType: 'external_service', source: 'http://10.0.0.9:9000' }])[0].upstream).toEqual({ kind: 'url', url: 'http://10.0.0.9:9000' });
  });
  it('routes to the port the live container listens on (a build provider\'s), not the spec\'s', () => {
    expect(desiredRoutes([{ ...row, port: 80 }])[0].upstream).toEqual({ kind: 'dns', name: 'web.svc.internal.', port: 80 });
  });
  it('answers DNS only for apps with a live address', () => {
    expect(desiredDnsRecords([{ name: 'a', liveAddress: '172.18.0.2' }, { name: 'b', liveAddress: null }])).toEqual({ 'a.svc.internal.': '172.18.0.2' });
  });
});

describe('planApp with replicas: 0', () => {
  const live = { name: 'svc-web-1', running: true };
  it('in the answer: unpublish first; out of it: stop; gone: steady', () => {
    expect(planApp(app({ replicas: 0 }), undefined, [live], 0)).toEqual({ kind: 'stop_live', container: 'svc-web-1', unpublish: true });
    expect(planApp(app({ replicas: 0, liveAddress: null }), undefined, [live], 0)).toEqual({ kind: 'stop_live', container: 'svc-web-1', unpublish: false });
    expect(planApp(app({ replicas: 0, liveAddress: null }), undefined, [], 0)).toEqual({ kind: 'steady' });
  });
  it('a deploy still goes first; raising replicas again recreates the live container', () => {
    expect(planApp(app({ replicas: 0 }), deploy({ status: 'pending' }), [live], 0)).toMatchObject({ kind: 'begin_deploy' });
    expect(planApp(app({ replicas: 2, liveAddress: null }), undefined, [], 0)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: false, listed: false });
  });
  it('a live container killed for memory is healed with the reason', () => {
    expect(planApp(app(), undefined, [{ name: 'svc-web-1', running: false, exitCode: 137, oomKilled: true }], 0)).toEqual({ kind: 'heal', container: 'svc-web-1', exists: true, oomKilled: true });
  });
});
