// No storms (#9493 of the anchors: crash alerts so noisy users turned them off). A subject that can flap
// (an app's crashes, a service's errors, the disk) goes through one rule: an alert is sent when none is
// open and none was sent in the last 15 minutes; while it is open, more of the same say nothing; the
// recovery is sent once, and only when the alert it answers was sent.

export const STORM_WINDOW_MS = 15 * 60_000;

export interface AlertState {
  open: boolean;
  lastSentAtMs: number | null;
}

export type Signal = 'fire' | 'resolve';

/** Pure: whether to send, and the state after. An unchanged state is returned as the same object. */
export function decideAlert(state: AlertState | undefined, signal: Signal, nowMs: number, windowMs = STORM_WINDOW_MS): { send: boolean; next: AlertState } {
  const s = state ?? { open: false, lastSentAtMs: null };
  if (signal === 'resolve') return s.open ? { send: true, next: { open: false, lastSentAtMs: s.lastSentAtMs } } : { send: false, next: s };
  if (s.open) return { send: false, next: s };
  if (s.lastSentAtMs !== null && nowMs - s.lastSentAtMs < windowMs) return { send: false, next: s };
  return { send: true, next: { open: true, lastSentAtMs: nowMs } };
}
