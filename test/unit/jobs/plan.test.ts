import { describe, expect, it } from 'vitest';
import { planJobs, type OpenRun } from '../../../src/jobs/plan.js';
import type { Job } from '../../../src/desired/workload-fields.js';

const at = (s: string) => Date.parse(`2026-01-01T${s}Z`);
const job = (over: Partial<Job> = {}): Job => ({ name: 'j', schedule: '*/5 * * * *', command: 'x', timeout_seconds: 60, concurrency: 'forbid', ...over });
const running = (id: number, startedAt = '00:05:00', timeoutSeconds = 600): OpenRun => ({ id, job: 'j', status: 'running', startedAtMs: at(startedAt), timeoutSeconds, container: 'running' });

describe('planJobs', () => {
  it('a new job starts its schedule now: no past time runs, it wakes at the next one', () => {
    const p = planJobs([job()], new Map(), [], at('00:03:00'));
    expect(p.actions).toEqual([{ kind: 'tick', job: 'j', at: '2026-01-01T00:03:00.000Z' }]);
    expect(p.wakeAfterMs).toBe(2 * 60_000);
  });

  it('a time that came runs once; on time it is `schedule`', () => {
    const p = planJobs([job()], new Map([['j', '2026-01-01T00:03:00.000Z']]), [], at('00:05:01'));
    expect(p.actions).toEqual([
      { kind: 'tick', job: 'j', at: '2026-01-01T00:05:00.000Z' },
      { kind: 'create', job: 'j', trigger: 'schedule', scheduledFor: '2026-01-01T00:05:00.000Z' },
    ]);
    expect(p.wakeAfterMs).toBe(at('00:10:00') - at('00:05:01'));
  });

  it('many times missed while down run once, the newest, as `missed`', () => {
    const p = planJobs([job()], new Map([['j', '2026-01-01T00:00:00.000Z']]), [], at('02:03:00'));
    expect(p.actions.filter((a) => a.kind === 'create')).toEqual([{ kind: 'create', job: 'j', trigger: 'missed', scheduledFor: '2026-01-01T02:00:00.000Z' }]);
  });

  it('overlaps follow concurrency: forbid skips, allow starts beside, replace cancels the running one', () => {
    const ticks = new Map([['j', '2026-01-01T00:05:00.000Z']]);
    const now = at('00:10:01');
    const kinds = (c: Job['concurrency']) => planJobs([job({ concurrency: c })], ticks, [running(1)], now).actions.map((a) => a.kind);
    expect(kinds('forbid')).toEqual(['tick', 'skip']);
    expect(kinds('allow')).toEqual(['tick', 'create']);
    expect(kinds('replace')).toEqual(['tick', 'cancel', 'create']);
  });

  it('a finished container frees a forbid job in the same pass; a run past its timeout is stopped', () => {
    const ticks = new Map([['j', '2026-01-01T00:05:00.000Z']]);
    const ended = planJobs([job()], ticks, [{ ...running(1), container: 'exited' }], at('00:10:01'));
    expect(ended.actions.map((a) => a.kind)).toEqual(['finish', 'tick', 'create']);
    const late = planJobs([job()], new Map([['j', '2026-01-01T00:05:00.000Z']]), [running(2, '00:05:00', 60)], at('00:06:30'));
    expect(late.actions).toEqual([{ kind: 'timeout', runId: 2 }]);
  });

  it('pending runs start (one-offs always; "run now" under the job rule); a run of a job no longer in the spec is skipped', () => {
    const pending = (id: number, j: string | null): OpenRun => ({ id, job: j, status: 'pending', startedAtMs: null, timeoutSeconds: 60 });
    const p = planJobs([job()], new Map([['j', '2026-01-01T00:05:00.000Z']]), [running(1), pending(2, null), pending(3, 'j'), pending(4, 'gone')], at('00:06:00'));
    expect(p.actions.map((a) => [a.kind, 'runId' in a ? a.runId : undefined])).toEqual([['start', 2], ['skip', 3], ['skip', 4]]);
  });
});
