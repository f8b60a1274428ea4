// Retry timing of the outbox: quick first retries for a provider's blip, then hourly, for 24 hours.

export const DELIVERY_WINDOW_MS = 24 * 3_600_000;
const STEPS_MS = [5_000, 15_000, 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000];
const CAP_MS = 3_600_000;

/** Delay before attempt `attempts + 1`, after `attempts` failed ones (>= 1). */
export function retryDelayMs(attempts: number): number {
  return STEPS_MS[attempts - 1] ?? CAP_MS;
}

/** Pure: when to try again, or null when the next try would fall after the message expired. */
export function nextAttemptAt(attempts: number, nowMs: number, expiresAtMs: number): number | null {
  const at = nowMs + retryDelayMs(attempts);
  return at > expiresAtMs ? null : at;
}
