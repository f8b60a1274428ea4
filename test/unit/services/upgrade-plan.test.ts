import { describe, expect, it } from 'vitest';
import { planUpgrade, type UpgradeFacts } from '../../../src/reconcilers/service/upgrade-plan.js';

const T = Date.parse('2026-01-10T00:00:00Z');
const f = (o: Partial<UpgradeFacts> = {}): UpgradeFacts => ({ oldRunning: true, newExists: true, newRunning: true, appDeploysOpen: 0, moveRestarts: 0, nowMs: T, stepSinceMs: T, ...o });
const u = (o: Partial<Parameters<typeof planUpgrade>[0]> = {}) => ({ status: 'running' as const, step: 'backup' as const, attempts: 0, request: null, switchedAt: null, keepDays: 7, ...o });

describe('planUpgrade', () => {
  it.each([
    ['a step runs', u({ step: 'freeze' }), f(), { kind: 'run', step: 'freeze' }],
    ['the old container stopped before the switch: roll back', u({ step: 'move' }), f({ oldRunning: false }), { kind: 'fail', reason: 'the old container stopped during the upgrade' }],
    ['a move begun and never finished is made again', u({ step: 'move', attempts: 1 }), f(), { kind: 'restart-move' }],
    ['... but not forever', u({ step: 'move', attempts: 1 }), f({ moveRestarts: 2 }), { kind: 'fail', reason: 'the move was begun 3 times without finishing' }],
    ['a step begun three times fails', u({ step: 'verify', attempts: 3 }), f(), { kind: 'fail', reason: 'step verify was begun 3 times without finishing' }],
    ['waits for the new container', u({ step: 'wait_ready' }), f({ newReady: false }), { kind: 'wait', afterMs: 250 }],
    ['ready: on to the freeze', u({ step: 'wait_ready' }), f({ newReady: true }), { kind: 'run', step: 'wait_ready' }],
    ['not ready in 5 minutes', u({ step: 'wait_ready' }), f({ newReady: false, nowMs: T + 301_000 }), { kind: 'fail', reason: 'the new container was not ready within 5 minutes' }],
    ['the new container died', u({ step: 'wait_ready' }), f({ newRunning: false }), { kind: 'fail', reason: 'the new container stopped before it was ready' }],
    ['the old one stays up while the apps redeploy', u({ status: 'switched', step: 'drain' }), f({ appDeploysOpen: 1, oldRunning: true }), { kind: 'wait', afterMs: 250 }],
    ['apps redeployed: the old one stops', u({ status: 'switched', step: 'drain' }), f(), { kind: 'run', step: 'drain' }],
    ['kept until keep_days', u({ status: 'switched', step: 'kept', switchedAt: '2026-01-09T00:00:00Z' }), f({ oldRunning: false }), { kind: 'wait', afterMs: 3_600_000 }],
    ['kept days over: confirmed by itself', u({ status: 'switched', step: 'kept', switchedAt: '2026-01-02T00:00:00Z' }), f({ oldRunning: false }), { kind: 'run', step: 'confirm' }],
    ['a revert asked for', u({ status: 'switched', step: 'kept', request: 'revert', switchedAt: '2026-01-09T00:00:00Z' }), f({ oldRunning: false }), { kind: 'run', step: 'revert' }],
    ['a confirm asked for', u({ status: 'switched', step: 'kept', request: 'confirm', switchedAt: '2026-01-09T00:00:00Z' }), f({ oldRunning: false }), { kind: 'run', step: 'confirm' }],
  ] as const)('%s', (_what, up, facts, want) => {
    expect(planUpgrade(up, facts)).toEqual(want);
  });
});
