// Pure decisions of the offsite reconciler: whether an upload row is due, and when a failed one is tried
// again. Table-tested without a clock or a store.
import type { UploadStatus } from '../../store/schema/index.js';

/** Retries double from the base up to this: a store down for a day is tried every 6 hours, never dropped. */
export const MAX_RETRY_MS = 6 * 60 * 60_000;

export function retryDelayMs(attempts: number, baseSeconds: number): number {
  const n = Math.max(1, attempts);
  return Math.min(MAX_RETRY_MS, baseSeconds * 1000 * 2 ** Math.min(n - 1, 20));
}

export type UploadPlan = { action: 'none' } | { action: 'wait'; inMs: number } | { action: 'copy' };

/**
 * `uploading` found by a pass means the attempt that set it ended without settling (the daemon died or
 * stopped mid-upload): it is copied again, like `pending`. `failed` waits for its next attempt.
 */
export function planUpload(u: { status: UploadStatus; nextAttemptAt: string | null }, now: number): UploadPlan {
  if (u.status === 'verified' || u.status === 'removed') return { action: 'none' };
  if (u.status === 'failed' && u.nextAttemptAt) {
    const at = Date.parse(u.nextAttemptAt);
    if (at > now) return { action: 'wait', inMs: at - now };
  }
  return { action: 'copy' };
}
