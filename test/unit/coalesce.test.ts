import { describe, expect, it } from 'vitest';
import { coalesced } from '../../src/coalesce.js';

describe('coalesced', () => {
  it('runs one at a time; calls during a run cost one more run, and all of them wait for it', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const c = coalesced(async () => {
      runs++;
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
    });
    const first = c.run();
    expect(c.current()).toBeDefined();
    const second = c.run();
    const third = c.run();
    expect(second).toBe(first);
    expect(third).toBe(first);
    gates.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(2); // the two calls during the first run asked for one more
    gates.shift()!();
    await Promise.all([first, second, third]);
    expect(runs).toBe(2);
    expect(most).toBe(1);
    expect(c.current()).toBeUndefined();
    expect(c.current()).toBeUndefined();
  });

  it('starts nothing once stopped, and the run under way asks for no other', async () => {
    let stopped = false;
    let runs = 0;
    let release!: () => void;
    const c = coalesced(async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
    }, () => stopped);
    const run = c.run();
    void c.run(); // would ask for one more
    stopped = true;
    release();
    await run;
    expect(runs).toBe(1);
    await c.run();
    expect(runs).toBe(1);
  });
});
