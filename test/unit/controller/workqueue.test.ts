import { describe, expect, it } from 'vitest';
import { backoffDelay, createWorkQueue } from '../../../src/controller/workqueue.js';
import { TerminalError, type Key, type Result } from '../../../src/controller/types.js';
import { createLogger } from '../../../src/log.js';
import { createFakeClock, settle } from '../../support/fake-clock.js';

type Outcome = Result | Error | 'gate';

/** A handler whose calls are recorded and whose outcomes the test scripts per call (default `{}`). */
function scripted(outcomes: Outcome[] = []) {
  const calls: { key: Key; at: number }[] = [];
  const gates: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  const perKeyRunning = new Map<Key, number>();
  let maxPerKey = 0;
  const clock = createFakeClock();
  const handler = async (key: Key): Promise<Result> => {
    calls.push({ key, at: clock.now() });
    running++;
    maxRunning = Math.max(maxRunning, running);
    perKeyRunning.set(key, (perKeyRunning.get(key) ?? 0) + 1);
    maxPerKey = Math.max(maxPerKey, perKeyRunning.get(key)!);
    try {
      const o = outcomes.shift() ?? {};
      if (o === 'gate') await new Promise<void>((r) => gates.push(r));
      else if (o instanceof Error) throw o;
      else return o;
      return {};
    } finally {
      running--;
      perKeyRunning.set(key, perKeyRunning.get(key)! - 1);
    }
  };
  const lines: string[] = [];
  const log = createLogger('debug', {}, (l) => lines.push(l));
  return {
    clock,
    calls,
    lines,
    log,
    handler,
    release: () => gates.shift()?.(),
    get maxRunning() {
      return maxRunning;
    },
    get maxPerKey() {
      return maxPerKey;
    },
  };
}

describe('backoffDelay', () => {
  it.each([
    [0, 0],
    [1, 5],
    [2, 10],
    [3, 20],
    [10, 2560],
    [16, 163_840],
    [17, 300_000],
    [100, 300_000],
  ])('after %i failures waits %i ms', (n, ms) => {
    expect(backoffDelay(n)).toBe(ms);
  });
});

describe('work queue', () => {
  it('coalesces duplicates added before the key runs', async () => {
    const s = scripted();
    const q = createWorkQueue({ handler: s.handler, clock: s.clock });
    q.add('app:a');
    q.add('app:a');
    q.add('app:a');
    q.add('app:b');
    await settle();
    expect(s.calls.map((c) => c.key)).toEqual(['app:a', 'app:b']);
  });

  it('never hands out a key in flight, and caps concurrency', async () => {
    const s = scripted(['gate', 'gate', 'gate', 'gate', 'gate', 'gate']);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock, concurrency: 2 });
    for (const k of ['app:a', 'app:b', 'app:c', 'app:d'] as Key[]) q.add(k);
    await settle();
    q.add('app:a'); // in flight: not handed out again until it finishes
    await settle();
    expect(s.calls.map((c) => c.key)).toEqual(['app:a', 'app:b']);
    for (let i = 0; i < 6; i++) {
      s.release();
      await settle();
    }
    expect(s.maxRunning).toBe(2);
    expect(s.maxPerKey).toBe(1);
    expect(s.calls.map((c) => c.key).sort()).toEqual(['app:a', 'app:a', 'app:b', 'app:c', 'app:d']);
  });

  it('runs a key added while running exactly once more afterwards', async () => {
    const s = scripted(['gate']);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock });
    q.add('app:a');
    await settle();
    q.add('app:a');
    q.add('app:a');
    q.add('app:a', { afterMs: 500 }); // later than the dirty rerun: coalesces into it
    await settle();
    expect(s.calls).toHaveLength(1);
    s.release();
    await settle();
    expect(s.calls).toHaveLength(2);
    await s.clock.advance(10_000);
    expect(s.calls).toHaveLength(2);
    expect(q.stats()).toEqual({ waiting: 0, queued: 0, running: 0, failing: 0 });
  });

  it('backs a throwing key off exponentially and resets on success', async () => {
    const boom = () => new Error('engine down');
    const s = scripted([boom(), boom(), boom(), boom(), {}, boom()]);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock, log: s.log });
    const t0 = s.clock.now();
    q.add('app:a');
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      delays.push(s.clock.nextIn()!);
      expect(q.stats().failing).toBe(1);
      await s.clock.advance(s.clock.nextIn()!);
    }
    expect(delays).toEqual([5, 10, 20, 40]);
    expect(s.calls.map((c) => c.at - t0)).toEqual([0, 5, 15, 35, 75]);
    expect(s.clock.pending()).toBe(0); // success: nothing scheduled
    expect(q.stats().failing).toBe(0);
    q.add('app:a');
    await settle();
    expect(s.clock.nextIn()).toBe(5); // reset: starts at the base again
    expect(s.lines.filter((l) => l.includes('retrying'))).toHaveLength(5);
    expect(JSON.parse(s.lines[0]!)).toMatchObject({ target: 'app:a', error: 'engine down', retry_ms: 5 });
    await q.stop();
  });

  it('re-adds after requeueAfterMs', async () => {
    const s = scripted([{ requeueAfterMs: 1000 }, {}]);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock });
    q.add('app:a');
    await settle();
    await s.clock.advance(999);
    expect(s.calls).toHaveLength(1);
    await s.clock.advance(1);
    expect(s.calls).toHaveLength(2);
    await s.clock.advance(60_000);
    expect(s.calls).toHaveLength(2);
  });

  it.each([
    ['earlier after later', [1000, 200], 200],
    ['later after earlier', [200, 1000], 200],
    ['immediate after delayed', [1000, 0], 0],
  ])('earliest deadline wins: %s', async (_name, delays, expectedAt) => {
    const s = scripted();
    const q = createWorkQueue({ handler: s.handler, clock: s.clock });
    const t0 = s.clock.now();
    for (const d of delays) q.add('app:a', { afterMs: d });
    await s.clock.advance(5000);
    expect(s.calls.map((c) => c.at - t0)).toEqual([expectedAt]);
  });

  it('logs a TerminalError and does not retry', async () => {
    const s = scripted([new TerminalError('image name invalid')]);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock, log: s.log });
    q.add('app:a');
    await s.clock.advance(600_000);
    expect(s.calls).toHaveLength(1);
    expect(s.clock.pending()).toBe(0);
    expect(s.lines.some((l) => l.includes('terminal') && l.includes('image name invalid'))).toBe(true);
  });

  it('stop waits for running reconciles and hands out nothing more', async () => {
    const s = scripted(['gate']);
    const q = createWorkQueue({ handler: s.handler, clock: s.clock, concurrency: 1 });
    q.add('app:a');
    q.add('app:b');
    q.add('app:c', { afterMs: 100 });
    await settle();
    let stopped = false;
    const stopping = q.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    q.add('app:d');
    s.release();
    await stopping;
    await s.clock.advance(1000);
    expect(s.calls.map((c) => c.key)).toEqual(['app:a']);
    expect(s.clock.pending()).toBe(0);
  });
});
