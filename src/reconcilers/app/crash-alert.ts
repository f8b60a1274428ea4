// When an app's open crash alert closes (docs/api.md "Notifications", issue 35 defect 5). `app_crashing` is
// raised by the heal path; the loop can end in other ways than the same container staying up: a deploy or
// a rollback replaces it, the app is scaled to 0 or deleted. Whatever ended it, the operator's last word on
// the app must not stay "keeps crashing". Pure: the reconciler observes, this decides, notices.ts words it.
import { HEAL_RESET_AFTER_MS } from './plan.js';

export interface CrashAlertFacts {
  /** The app's crash alert was sent and not yet answered (the storm rule's state). */
  alertOpen: boolean;
  /** The app's row is gone (deleted). */
  deleted: boolean;
  /** Replicas the spec asks for. */
  replicas: number;
  /** The live container as observed: whether it runs, and since when; null when there is none. */
  live: { running: boolean; upMs: number } | null;
}

export type CrashAlertVerdict =
  | { kind: 'none' }
  /** The live container runs but has not stayed up long enough yet: look again then. */
  | { kind: 'wait'; afterMs: number }
  | { kind: 'resolve'; why: 'serves' | 'scaled_to_zero' | 'deleted' };

/**
 * Closes the alert once nothing crashes any more: the live container (the one that crashed, healed, or a new
 * deploy's) has stayed up as long as the heal counter's reset asks (10 s); the app no longer runs anything
 * (scaled to 0, once its containers are gone); or the app is deleted. Anything else: the loop may go on.
 */
export function crashAlertVerdict(f: CrashAlertFacts, resetAfterMs = HEAL_RESET_AFTER_MS): CrashAlertVerdict {
  if (!f.alertOpen) return { kind: 'none' };
  if (f.deleted) return { kind: 'resolve', why: 'deleted' };
  if (f.replicas === 0) return f.live?.running ? { kind: 'none' } : { kind: 'resolve', why: 'scaled_to_zero' };
  if (!f.live?.running) return { kind: 'none' };
  if (f.live.upMs >= resetAfterMs) return { kind: 'resolve', why: 'serves' };
  return { kind: 'wait', afterMs: resetAfterMs - f.live.upMs };
}
