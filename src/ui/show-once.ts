// Post, redirect, show once: a secret made by a POST (a new API token) is kept here under a random handle,
// the POST redirects to a GET that names the handle, and that GET takes it out. Reloading the page, or
// going back to it, neither shows the secret again nor makes another one (a re-POST would). Kept in memory
// only: a daemon restart in those seconds loses it, and the user makes another token.
import { randomBytes } from 'node:crypto';

const TTL_MS = 5 * 60_000;
/** Bounded: a user who creates tokens and never looks at them cannot grow this without end. */
const MAX_ENTRIES = 256;

export interface ShowOnce<T> {
  /** Keeps `value` for `userId`; returns the handle to put in the redirect. */
  put(userId: number, value: T): string;
  /** The value, once, to the same user within the time limit; undefined otherwise. */
  take(userId: number, handle: string | undefined): T | undefined;
}

export function createShowOnce<T>(now: () => number = Date.now): ShowOnce<T> {
  const kept = new Map<string, { userId: number; value: T; until: number }>();
  const sweep = () => {
    const t = now();
    for (const [k, v] of kept) if (v.until <= t) kept.delete(k);
    while (kept.size >= MAX_ENTRIES) kept.delete(kept.keys().next().value!);
  };
  return {
    put(userId, value) {
      sweep();
      const handle = randomBytes(16).toString('hex');
      kept.set(handle, { userId, value, until: now() + TTL_MS });
      return handle;
    },
    take(userId, handle) {
      if (!handle) return undefined;
      const entry = kept.get(handle);
      if (!entry || entry.userId !== userId) return undefined;
      kept.delete(handle);
      return entry.until > now() ? entry.value : undefined;
    },
  };
}
