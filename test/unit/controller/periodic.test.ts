// Periodic work as a queue key (src/controller/periodic.ts): the pass runs at once, then once per period
// through `requeueAfterMs`; adds in between (the resync) do not run it early; a throw is the queue's backoff.
import { afterEach, describe, expect, it } from 'vitest';
import { periodic } from '../../../src/controller/periodic.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { queueOf } from '../../support/queue.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => void (await Promise.all(stops.splice(0).map((s) => s()))));

function rig(fail: () => boolean = () => false) {
  const clock = createFakeClock();
  const runs: number[] = [];
  const r = periodic({
    kind: 'certs',
    name: 'watch',
    periodMs: 1_000,
    clock,
    pass() {
      runs.push(clock.now());
      if (fail()) throw new Error('no');
    },
  });
  const q = queueOf(clock, r);
  stops.push(() => q.stop());
  return { clock, runs, r, q, t0: clock.now() };
}

describe('periodic(): a loop as a key of the work queue', () => {
  it('runs at start and then once per period, with one timer pending, the queue one', async () => {
    const { clock, runs, q, t0 } = rig();
    await q.start();
    await clock.advance(0);
    expect(runs).toEqual([t0]);
    await clock.advance(3_000);
    expect(runs).toEqual([t0, t0 + 1_000, t0 + 2_000, t0 + 3_000]);
    expect(clock.pending()).toBe(1);
    expect(clock.nextIn()).toBe(1_000);
  });

  it('an add before its time (the resync) does not run the pass early nor move the next one', async () => {
    const { clock, runs, q, t0 } = rig();
    await q.start();
    await clock.advance(400);
    q.add('certs:watch'); // what the manager's resync does
    await clock.advance(0);
    expect(runs).toEqual([t0]);
    expect(q.passes).toEqual(['certs:watch', 'certs:watch']);
    await clock.advance(600);
    expect(runs).toEqual([t0, t0 + 1_000]);
    expect(clock.nextIn()).toBe(1_000);
  });

  it('a throwing pass backs off in the queue and runs again before the period; success restarts the period', async () => {
    let failing = true;
    const { clock, runs, q, t0 } = rig(() => failing);
    await q.start();
    await clock.advance(0);
    expect(runs).toEqual([t0]);
    await clock.advance(5); // the queue's first retry (5 ms)
    expect(runs).toEqual([t0, t0 + 5]);
    failing = false;
    await clock.advance(10);
    expect(runs).toEqual([t0, t0 + 5, t0 + 15]);
    await clock.advance(1_000);
    expect(runs).toEqual([t0, t0 + 5, t0 + 15, t0 + 1_015]);
  });

  it('reconciling again within the period changes nothing: no pass, the time left as the requeue', async () => {
    const { clock, runs, r } = rig();
    expect(await r.reconcile('watch')).toEqual({ requeueAfterMs: 1_000 });
    await clock.advance(250);
    expect(await r.reconcile('watch')).toEqual({ requeueAfterMs: 750 });
    expect(runs).toHaveLength(1);
    expect(await r.reconcile('other')).toEqual({});
    expect(runs).toHaveLength(1);
  });
});
