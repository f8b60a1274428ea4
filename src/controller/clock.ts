// Time as a port: the work queue and the manager schedule through a Clock so unit tests drive time with a
// fake (test/support/fake-clock.ts) instead of sleeping.

/** Opaque handle returned by `setTimeout`; only ever passed back to `clearTimeout` of the same clock. */
export type TimerHandle = unknown;

/** Wall time in ms plus one-shot timers; all the scheduling the controller needs. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock. Timers are unref'd so a pending retry never keeps the process alive on its own. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};
