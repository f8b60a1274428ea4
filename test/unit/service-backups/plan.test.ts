// The pure decisions of per-service backups (src/reconcilers/service-backup/plan.ts): key names, what
// retention drops, and the next step of a restore.
import { describe, expect, it } from 'vitest';
import { beyondServiceRetention, parseServiceBackupKey, planServiceRestore, serviceBackupKeyName, type RestoreFacts } from '../../../src/reconcilers/service-backup/plan.js';

describe('service-backup keys', () => {
  it.each([
    ['12', { kind: 'backup', id: 12 }],
    ['copy-3', { kind: 'copy', id: 3 }],
    ['restore-7', { kind: 'restore', id: 7 }],
    ['schedule', { kind: 'schedule' }],
    ['files', { kind: 'files' }],
  ] as const)('%s', (name, key) => {
    expect(parseServiceBackupKey(name)).toEqual(key);
    expect(serviceBackupKeyName(key)).toBe(name);
  });
  it.each(['0', 'copy-0', 'copy-', 'restore-x', '-1', '01', 'copy-1-2', 'other'])('refuses %s', (name) => {
    expect(parseServiceBackupKey(name)).toBeUndefined();
  });
});

const c = (id: number) => ({ id, status: 'completed' as const });
const f = (id: number) => ({ id, status: 'failed' as const });
const r = (id: number) => ({ id, status: 'running' as const });

describe('beyondServiceRetention', () => {
  it.each([
    ['nothing beyond', [c(3), c(2), c(1)], 3, [], []],
    ['the oldest completed beyond the newest 2', [c(4), c(3), c(2), c(1)], 2, [], [2, 1]],
    ['a failed one newer than the last kept stays; older ones go', [f(6), c(5), f(4), c(3), f(2), c(1)], 2, [], [2, 1]],
    ['a running one is never dropped nor counted', [r(5), c(4), c(3), c(2)], 2, [], [2]],
    ['a needed one stays (an open upgrade, a running restore)', [c(4), c(3), c(2), c(1)], 2, [1], [2]],
    ['retain below 1 keeps one', [c(2), c(1)], 0, [], [1]],
  ] as const)('%s', (_what, rows, retain, needed, want) => {
    expect(beyondServiceRetention([...rows], retain, new Set(needed))).toEqual(want);
  });
});

const T = Date.parse('2026-12-01T00:00:00Z');
const facts = (o: Partial<RestoreFacts> = {}): RestoreFacts => ({ backup: 'ready', target: 'active', nowMs: T, stepSinceMs: T, ...o });
const restore = (o: Partial<Parameters<typeof planServiceRestore>[0]> = {}) => ({ status: 'running' as const, step: 'safety' as const, attempts: 0, intoNew: false, ...o });

describe('planServiceRestore', () => {
  it.each([
    ['a restore into its service begins with the safety backup', restore(), facts(), { kind: 'run', step: 'safety' }],
    ['then loads', restore({ step: 'load' }), facts(), { kind: 'run', step: 'load' }],
    ['a copy waits for its new service', restore({ step: 'wait_target', intoNew: true }), facts({ target: 'starting' }), { kind: 'wait', afterMs: 500 }],
    ['... and loads once it is active', restore({ step: 'wait_target', intoNew: true }), facts(), { kind: 'run', step: 'load' }],
    ['... but not for ever', restore({ step: 'wait_target', intoNew: true }), facts({ target: 'starting', nowMs: T + 601_000 }), { kind: 'fail', reason: 'the new service did not become active within 10 minutes' }],
    ['its own service not active: refused, not waited for', restore(), facts({ target: 'starting' }), { kind: 'fail', reason: 'the service is not active; restore when it is' }],
    ['a stopped service', restore(), facts({ target: 'stopped' }), { kind: 'fail', reason: 'the service is stopped; start it and restore again' }],
    ['the service was deleted', restore({ step: 'load' }), facts({ target: 'gone' }), { kind: 'fail', reason: 'the service to restore into was deleted' }],
    ['the file is gone', restore(), facts({ backup: 'missing' }), { kind: 'fail', reason: 'the backup file is missing from the service-backups directory' }],
    ['data on another node', restore(), facts({ target: 'other_node' }), { kind: 'fail', reason: 'the service keeps its data on another Swarm node; service restores run on the manager only for now' }],
    ['a load begun three times (a crash each time) fails', restore({ step: 'load', attempts: 3 }), facts(), { kind: 'fail', reason: 'step load was begun 3 times without finishing' }],
    ['a settled restore does nothing', restore({ status: 'completed', step: 'done' }), facts(), { kind: 'none' }],
  ] as const)('%s', (_what, row, f, want) => {
    expect(planServiceRestore(row, f)).toEqual(want);
  });
});
