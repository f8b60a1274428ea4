// Work that runs every so often (the preview sweep, the certificate log, the data directory's disk) as a
// key of the work queue instead of a timer of its own: the pass returns `requeueAfterMs` for the next
// one, so the queue's coalescing, backoff and stop apply to it like to any reconciler. The periodic resync
// (and any early add) also hands the key out; a pass asked for before its time only says how long is left,
// so the work keeps its own period whatever else adds the key.
import { systemClock, type Clock } from './clock.js';
import type { Kind, Reconciler } from './types.js';

export interface PeriodicOptions {
  kind: Kind;
  /** The one name of the kind (`previews:sweep`). */
  name: string;
  periodMs: number;
  /** One pass. A throw goes to the queue's backoff; the period starts again after the next success. */
  pass(): Promise<void> | void;
  clock?: Clock;
}

/** A reconciler of one name that runs `pass` at most once per `periodMs`, at once the first time. */
export function periodic(o: PeriodicOptions): Reconciler {
  const clock = o.clock ?? systemClock;
  let nextAt: number | undefined;
  return {
    kind: o.kind,
    listNames: () => [o.name],
    async reconcile(name) {
      if (name !== o.name) return {};
      const early = nextAt === undefined ? 0 : nextAt - clock.now();
      if (early > 0) return { requeueAfterMs: early };
      await o.pass();
      nextAt = clock.now() + o.periodMs;
      return { requeueAfterMs: o.periodMs };
    },
  };
}
