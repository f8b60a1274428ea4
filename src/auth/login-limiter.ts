// Login throttling (API.md "Authentication"): failed attempts are counted per client address in a sliding
// 15-minute window; once an address has 10 failures in the window, every attempt from it is refused
// until the oldest of them leaves the window. Per address, never per username alone: that would let
// anyone lock the administrator out. Memory is bounded: at most LIMIT timestamps per address, and
// addresses with nothing left in the window are swept.

export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_MAX_FAILURES = 10;
const SWEEP_AT = 10_000;

export interface LoginLimiter {
  /** Milliseconds to wait before `address` may try again, or 0 when it may try now. */
  blockedFor(address: string): number;
  /** Records one failed attempt from `address`. */
  fail(address: string): void;
  /** Takes back one recorded failure of `address` (an attempt counted up front turned out right). */
  forgive(address: string): void;
}

export function createLoginLimiter(now: () => number, opts = { windowMs: LOGIN_WINDOW_MS, max: LOGIN_MAX_FAILURES }): LoginLimiter {
  const failures = new Map<string, number[]>();

  const recent = (address: string, t: number): number[] => {
    const list = (failures.get(address) ?? []).filter((at) => at > t - opts.windowMs);
    if (list.length === 0) failures.delete(address);
    else failures.set(address, list);
    return list;
  };

  const sweep = (t: number) => {
    for (const address of [...failures.keys()]) recent(address, t);
  };

  return {
    blockedFor(address) {
      const t = now();
      const list = recent(address, t);
      if (list.length < opts.max) return 0;
      // The window frees up when the failure that made the count reach the limit expires.
      return list[list.length - opts.max] + opts.windowMs - t;
    },
    fail(address) {
      const t = now();
      const list = recent(address, t);
      list.push(t);
      failures.set(address, list.slice(-opts.max));
      if (failures.size > SWEEP_AT) sweep(t);
    },
    forgive(address) {
      const list = failures.get(address);
      list?.pop();
      if (list?.length === 0) failures.delete(address);
    },
  };
}
