// Bounded polling for tests: wait on a condition instead of sleeping a fixed time.

export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between checks (default 50 ms). */
  intervalMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

/**
 * Resolves with the first truthy value `cond` returns (it may be async); rejects after `timeoutMs` with the
 * last error `cond` threw, if any, so a failing test says what it was waiting for.
 */
export async function waitFor<T>(cond: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= end) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'condition'}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
