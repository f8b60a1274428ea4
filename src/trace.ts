// Timing marks for benchmarks (bench:heal's timeline of one heal: the engine event received, the pass
// started, each engine call, the DNS sync). Published on a node:diagnostics_channel, which costs one
// `hasSubscribers` check when nobody listens (the daemon in production), so the marks can stay in the
// code. Marks carry names of keys, containers and engine operations only, never values or secrets.
import { channel } from 'node:diagnostics_channel';

export const TRACE_CHANNEL = 'svc:trace';

export interface TraceMark {
  /** What happened: 'event', 'pass', 'engine', 'heal'. */
  what: string;
  /** Detail: the event's action, the key, the engine operation ("create svc-web-3"), the heal step. */
  name: string;
  /** Wall-clock ms (sub-ms precision) when it began. */
  atMs: number;
  /** When it ended (passes and engine calls). */
  endMs?: number;
  /** The owning key or container, when known. */
  subject?: string;
}

const marks = channel(TRACE_CHANNEL);

/** Wall-clock time with sub-millisecond precision (comparable with the engine's event times). */
export const nowMs = () => performance.timeOrigin + performance.now();

/** Publishes one mark when someone listens. */
export function mark(what: string, name: string, subject?: string, atMs = nowMs(), endMs?: number): void {
  if (marks.hasSubscribers) marks.publish({ what, name, subject, atMs, endMs } satisfies TraceMark);
}

/** Runs `fn` and publishes its span when someone listens (no extra cost otherwise). */
export async function span<T>(what: string, name: string, fn: () => Promise<T>, subject?: string): Promise<T> {
  if (!marks.hasSubscribers) return fn();
  const at = nowMs();
  try {
    return await fn();
  } finally {
    mark(what, name, subject, at, nowMs());
  }
}
