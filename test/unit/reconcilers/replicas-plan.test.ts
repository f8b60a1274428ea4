import { describe, expect, it } from 'vitest';
import { planReplicas, type InstanceFacts } from '../../../src/reconcilers/app/replicas-plan.js';
import type { ObservedContainer } from '../../../src/reconcilers/app/plan.js';

const NOW = 100_000;
const row = (slot: number, over: Partial<InstanceFacts> = {}): InstanceFacts => ({
  slot, deployId: 2, containerName: `svc-web-2-r${slot}`, address: `172.30.0.${10 + slot}`, healFailures: 0, healNotBeforeMs: null, updatedAtMs: NOW - 60_000, ...over,
});
const up = (name: string, over: Partial<ObservedContainer> = {}): ObservedContainer => ({ name, running: true, startedAtMs: NOW - 60_000, ...over });
const plan = (replicas: number, instances: InstanceFacts[], containers: ObservedContainer[], liveDeployId: number | null = 2) =>
  planReplicas({ replicas, liveDeployId, instances, containers, nowMs: NOW, dnsRefreshMs: 250, healthTimeoutMs: 30_000 });

describe('planReplicas', () => {
  it('steady: nothing to do (one replica, or three healthy ones)', () => {
    expect(plan(1, [], [])).toEqual([]);
    expect(plan(3, [row(1), row(2)], [up('svc-web-2-r1'), up('svc-web-2-r2')])).toEqual([]);
  });

  it.each([
    ['a missing slot is created', 3, [row(1)], [up('svc-web-2-r1')], [{ kind: 'create', slot: 2 }]],
    ['a row of another version is replaced', 2, [row(1, { deployId: 1, containerName: 'svc-web-1-r1' })], [up('svc-web-1-r1')], [{ kind: 'create', slot: 1, replace: 'svc-web-1-r1' }]],
    ['a container gone is recreated at once', 2, [row(1)], [], [{ kind: 'create', slot: 1, replace: 'svc-web-2-r1' }]],
    ['a gone one whose last attempt failed waits for its backoff', 2, [row(1, { healFailures: 1, healNotBeforeMs: NOW + 5_000 })], [], [{ kind: 'wait', slot: 1, afterMs: 5_000 }]],
    ['a stopped one is restarted', 2, [row(1)], [up('svc-web-2-r1', { running: false, exitCode: 3 })], [{ kind: 'restart', slot: 1, oomKilled: false, exitCode: 3 }]],
    ['OOMKilled is said', 2, [row(1)], [up('svc-web-2-r1', { running: false, exitCode: 137, oomKilled: true })], [{ kind: 'restart', slot: 1, oomKilled: true, exitCode: 137 }]],
    ['a crash loop backs off', 2, [row(1, { healFailures: 2, healNotBeforeMs: NOW + 20_000 })], [up('svc-web-2-r1', { running: false })], [{ kind: 'wait', slot: 1, afterMs: 20_000 }]],
    ['running, not in the answer: probed', 2, [row(1, { address: null })], [up('svc-web-2-r1', { startedAtMs: NOW - 500 })], [{ kind: 'probe', slot: 1, startedAtMs: NOW - 500 }]],
    ['up 10 s after failures: reset', 2, [row(1, { healFailures: 2 })], [up('svc-web-2-r1')], [{ kind: 'reset', slot: 1 }]],
    ['up less than 10 s after failures: look again then', 2, [row(1, { healFailures: 2 })], [up('svc-web-2-r1', { startedAtMs: NOW - 4_000 })], [{ kind: 'wait', slot: 1, afterMs: 6_000 }]],
    ['beyond replicas and in the answer: unpublished first', 1, [row(1)], [up('svc-web-2-r1')], [{ kind: 'unpublish', slot: 1 }]],
    ['unpublished just now: wait for the proxy to re-resolve', 1, [row(1, { address: null, updatedAtMs: NOW - 100 })], [up('svc-web-2-r1')], [{ kind: 'wait', slot: 1, afterMs: 200 }]],
    ['unpublished long enough: removed', 1, [row(1, { address: null, updatedAtMs: NOW - 300 })], [up('svc-web-2-r1')], [{ kind: 'remove', slot: 1, container: 'svc-web-2-r1' }]],
    ['beyond replicas and gone: the row goes', 1, [row(1)], [], [{ kind: 'remove', slot: 1, container: null }]],
  ] as const)('%s', (_what, replicas, instances, containers, want) => {
    expect(plan(replicas, [...instances], [...containers])).toEqual(want);
  });

  it('nothing live (or scaled to 0): every extra slot goes', () => {
    expect(plan(3, [row(1), row(2)], [up('svc-web-2-r1'), up('svc-web-2-r2')], null)).toEqual([
      { kind: 'unpublish', slot: 1 },
      { kind: 'unpublish', slot: 2 },
    ]);
  });
});
