// The stack deploy's walk, as a table: forward in order, one service at a time, then back over the replaced ones.
import { describe, expect, it } from 'vitest';
import { planStack, STEP_POLL_MS } from '../../../src/reconcilers/stack/plan.js';
import type { DeployStatus, StackDeployStep } from '../../../src/store/schema/index.js';

const step = (service: string, status: StackDeployStep['status'], deployId: number | null = null, previousDeployId: number | null = 1): StackDeployStep =>
  ({ service, appId: 1, action: 'change', changes: [], stopFirst: false, deployId, previousDeployId, status });

const after = (s: StackDeployStep, deps: string[]): StackDeployStep => ({ ...s, after: deps });

const cases: [string, { status: 'pending' | 'running'; phase: 'forward' | 'rollback'; steps: StackDeployStep[] }, Record<number, DeployStatus>, ReturnType<typeof planStack>][] = [
  ['a pending deploy begins', { status: 'pending', phase: 'forward', steps: [step('db', 'pending')] }, {}, { kind: 'begin' }],
  ['the first step starts', { status: 'running', phase: 'forward', steps: [step('db', 'pending'), step('web', 'pending')] }, {}, { kind: 'start_step', index: 0 }],
  ['a step in progress is waited on; the next does not start', { status: 'running', phase: 'forward', steps: [step('db', 'running', 7), step('web', 'pending')] }, { 7: 'running' }, { kind: 'wait', afterMs: STEP_POLL_MS }],
  ['a succeeded step is done', { status: 'running', phase: 'forward', steps: [step('db', 'running', 7), step('web', 'pending')] }, { 7: 'success' }, { kind: 'step_done', index: 0 }],
  ['then the next starts', { status: 'running', phase: 'forward', steps: [step('db', 'done', 7), step('web', 'pending')] }, {}, { kind: 'start_step', index: 1 }],
  ['a failed app deploy fails the step', { status: 'running', phase: 'forward', steps: [step('db', 'done', 7), step('web', 'running', 8)] }, { 7: 'success', 8: 'auto_rollback' }, { kind: 'step_failed', index: 1 }],
  ['a cancelled one too', { status: 'running', phase: 'forward', steps: [step('web', 'running', 8)] }, { 8: 'cancelled' }, { kind: 'step_failed', index: 0 }],
  ['all done: success', { status: 'running', phase: 'forward', steps: [step('db', 'done', 7), step('web', 'done', 8)] }, {}, { kind: 'finish', status: 'success' }],
  ['rollback: the newest replaced service first', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7), step('cache', 'done', 9), step('web', 'failed', 8)] }, {}, { kind: 'rollback_step', index: 1 }],
  ['a rollback in progress is waited on', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7), step('cache', 'rolling_back', 10), step('web', 'failed', 8)] }, { 10: 'running' }, { kind: 'wait', afterMs: STEP_POLL_MS }],
  ['a finished rollback is recorded', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7), step('cache', 'rolling_back', 10)] }, { 10: 'success' }, { kind: 'rollback_done', index: 1, ok: true }],
  ['a created service is kept', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7, null), step('cache', 'rolled_back', 10)] }, {}, { kind: 'keep_step', index: 0 }],
  ['independent services start side by side', { status: 'running', phase: 'forward', steps: [step('db', 'running', 7), after(step('cache', 'pending'), []), after(step('web', 'pending'), ['db'])] }, { 7: 'running' }, { kind: 'start_step', index: 1 }],
  ['a dependant waits for its dependency of this deploy', { status: 'running', phase: 'forward', steps: [step('db', 'running', 7), after(step('cache', 'running', 9), []), after(step('web', 'pending'), ['db'])] }, { 7: 'running', 9: 'running' }, { kind: 'wait', afterMs: STEP_POLL_MS }],
  ['and starts once it is done (a dependency outside the deploy is not waited for)', { status: 'running', phase: 'forward', steps: [step('db', 'done', 7), after(step('cache', 'running', 9), []), after(step('web', 'pending'), ['db', 'queue'])] }, { 9: 'running' }, { kind: 'start_step', index: 2 }],
  ['after a failure, a service still deploying is waited for before any rollback', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7), after(step('cache', 'running', 9), []), after(step('web', 'failed', 8), ['db'])] }, { 9: 'running' }, { kind: 'wait', afterMs: STEP_POLL_MS }],
  ['then recorded done, so it is rolled back too', { status: 'running', phase: 'rollback', steps: [step('db', 'done', 7), after(step('cache', 'running', 9), []), after(step('web', 'failed', 8), ['db'])] }, { 9: 'success' }, { kind: 'step_done', index: 1 }],
  ['nothing left: rolled back', { status: 'running', phase: 'rollback', steps: [step('db', 'kept', 7, null), step('cache', 'rolled_back', 10), step('web', 'failed', 8)] }, {}, { kind: 'finish', status: 'rolled_back' }],
];

describe('planStack', () => {
  it.each(cases)('%s', (_name, d, statuses, want) => {
    expect(planStack(d, (id) => statuses[id])).toEqual(want);
  });
});
