// A Clock whose time moves only when a test says so. `advance` fires due timers in deadline order and lets
// the promise jobs they start settle in between, so a test can step through retries without sleeping.
import type { Clock, TimerHandle } from '../../src/controller/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets pending promise callbacks (and the I/O-free work they chain) run to completion. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): Promise<void>;
  /** Number of timers not yet fired. */
  pending(): number;
  /** Deadline of the earliest pending timer, relative to now; undefined when none. */
  nextIn(): number | undefined;
}

/** A fake clock starting at `start` ms. */
export function createFakeClock(start = 1_000_000): FakeClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, Timer>();
  const earliest = () => [...timers.values()].sort((a, b) => a.at - b.at || a.id - b.id)[0];
  return {
    now: () => now,
    setTimeout(fn: () => void, ms: number): TimerHandle {
      const id = ++seq;
      timers.set(id, { id, at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(handle: TimerHandle) {
      timers.delete(handle as number);
    },
    async advance(ms: number) {
      const end = now + ms;
      await settle();
      for (let t = earliest(); t && t.at <= end; t = earliest()) {
        timers.delete(t.id);
        now = Math.max(now, t.at);
        t.fn();
        await settle();
      }
      now = end;
      await settle();
    },
    pending: () => timers.size,
    nextIn() {
      const t = earliest();
      return t ? t.at - now : undefined;
    },
  };
}
