import { describe, it, expect } from 'vitest';
import { isNewStartRequest, planService, HEAL_RESET_AFTER_MS, readyPollMs, type ObservedService, type ServiceFacts } from '../../../src/reconcilers/service/plan.js';

const f = (over: Partial<ServiceFacts> = {}): ServiceFacts => ({
  status: 'pending', desiredRunning: true, deleting: false, purge: false, dataDirExists: true,
  needsProvisioning: false, healFailures: 0, healNotBeforeMs: null, ...over,
});
const none: ObservedService = { exists: false, running: false };
const running = (startedAtMs = 0): ObservedService => ({ exists: true, running: true, startedAtMs });
const exited = (exitCode = 1): ObservedService => ({ exists: true, running: false, exitCode });
const NOW = 1_000_000;

describe('planService', () => {
  it.each<[string, ServiceFacts, ObservedService, boolean | undefined, unknown, string]>([
    ['pending, no container: create (not a failure)', f(), none, undefined, { kind: 'create', counts: false }, 'provisioning'],
    ['provisioning, not ready yet: wait', f({ status: 'provisioning' }), running(NOW - 2000), false, { kind: 'wait-ready', afterMs: 50 }, 'provisioning'],
    ['provisioning, ready: active', f({ status: 'provisioning' }), running(), true, { kind: 'mark-active' }, 'active'],
    ['garage ready but not provisioned', f({ status: 'provisioning', needsProvisioning: true }), running(), true, { kind: 'provision-garage' }, 'provisioning'],
    ['provisioning, container exited: failure recorded', f({ status: 'provisioning' }), exited(3), undefined,
      { kind: 'fail', message: 'container exited with code 3 before it was ready' }, 'error'],
    ['active and running: nothing', f({ status: 'active' }), running(), undefined, { kind: 'none' }, 'active'],
    ['active, container died: start it again (counted)', f({ status: 'active' }), exited(137), undefined, { kind: 'start', counts: true }, 'provisioning'],
    ['active, container removed: recreate (counted)', f({ status: 'active' }), none, undefined, { kind: 'create', counts: true }, 'provisioning'],
    ['error, retry due: start (already counted)', f({ status: 'error', healFailures: 1, healNotBeforeMs: NOW - 1 }), exited(), undefined, { kind: 'start', counts: false }, 'provisioning'],
    ['provisioning, container removed: recreate (counted)', f({ status: 'provisioning' }), none, undefined, { kind: 'create', counts: true }, 'provisioning'],
    ['error, retry not due: back off', f({ status: 'error', healFailures: 2, healNotBeforeMs: NOW + 5000 }), exited(), undefined,
      { kind: 'backoff', afterMs: 5000 }, 'error'],
    ['crash loop: back off before recreating', f({ status: 'active', healFailures: 3, healNotBeforeMs: NOW + 40_000 }), none, undefined,
      { kind: 'backoff', afterMs: 40_000 }, 'active'],
    ['garage provisioning failed, retry not due', f({ status: 'error', needsProvisioning: true, healFailures: 1, healNotBeforeMs: NOW + 10 }), running(), true,
      { kind: 'backoff', afterMs: 10 }, 'error'],
    ['garage provisioning failed, retry due', f({ status: 'error', needsProvisioning: true, healFailures: 1, healNotBeforeMs: NOW }), running(), true,
      { kind: 'provision-garage' }, 'error'],
    ['stop requested, running: stop', f({ status: 'active', desiredRunning: false }), running(), undefined, { kind: 'stop' }, 'stopped'],
    ['stopped and not running: nothing', f({ status: 'active', desiredRunning: false }), exited(0), undefined, { kind: 'none' }, 'stopped'],
    ['stopped, start requested: start (not counted)', f({ status: 'stopped' }), exited(0), undefined, { kind: 'start', counts: false }, 'provisioning'],
    ['stopped before ever created, started: create', f({ status: 'stopped' }), none, undefined, { kind: 'create', counts: false }, 'provisioning'],
    ['deleting with a container: remove it first', f({ deleting: true, purge: true }), running(), undefined, { kind: 'remove' }, 'pending'],
    ['deleting with purge: then the data dir', f({ deleting: true, purge: true }), none, undefined, { kind: 'purge' }, 'pending'],
    ['deleting, data gone: forget the row', f({ deleting: true, purge: true, dataDirExists: false }), none, undefined, { kind: 'forget' }, 'pending'],
    ['deleting without purge keeps the data', f({ deleting: true }), none, undefined, { kind: 'forget' }, 'pending'],
  ])('%s', (_name, facts, obs, ready, action, status) => {
    expect(planService(facts, obs, ready, NOW)).toEqual({ action, status });
  });

  it('uses the engine error when a start failed', () => {
    expect(planService(f({ status: 'provisioning' }), { exists: true, running: false, error: 'bind: address in use' }, undefined, NOW).action)
      .toEqual({ kind: 'fail', message: 'bind: address in use' });
  });

  it('resets the heal counter once a healed container stayed up', () => {
    const facts = f({ status: 'active', healFailures: 2, healNotBeforeMs: 0 });
    expect(planService(facts, running(NOW - HEAL_RESET_AFTER_MS), undefined, NOW).action).toEqual({ kind: 'none', resetHeal: true });
    expect(planService(facts, running(NOW - 1000), undefined, NOW).action).toEqual({ kind: 'none', afterMs: HEAL_RESET_AFTER_MS - 1000 });
  });

  it('is steady: an active running service plans nothing twice in a row', () => {
    const facts = f({ status: 'active' });
    expect(planService(facts, running(), undefined, NOW)).toEqual(planService(facts, running(), undefined, NOW + 10_000));
  });
});

describe('readyPollMs', () => {
  it.each([[0, 50], [200, 50], [4000, 50], [14_999, 50], [15_000, 250], [59_999, 250], [60_000, 1000]])('up %i ms: poll after %i ms', (up, ms) => {
    expect(readyPollMs(up)).toBe(ms);
  });
});

describe('isNewStartRequest', () => {
  it.each([
    ['never asked', null, null, false],
    ['asked, not seen yet', '2026-01-01T00:00:00.001Z', null, true],
    ['asked again since', '2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.001Z', true],
    ['seen', '2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.001Z', false],
  ] as const)('%s', (_n, requested, seen, fresh) => {
    expect(isNewStartRequest(requested, seen)).toBe(fresh);
  });
});
