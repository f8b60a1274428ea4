// The work queue between "something changed" and the reconcilers (DESIGN.md "Core contracts").
// Keys, not events: adding a key that is already waiting coalesces (the earliest deadline wins), a key is
// never handed to two workers at once, and a key added while it runs runs once more afterwards. A throw
// backs the key off exponentially; success resets; `requeueAfterMs` re-adds; TerminalError is not retried.
// p-queue only caps how many reconciles run at the same time.
import PQueue from 'p-queue';
import type { Key, Result } from './types.js';
import { TerminalError } from './types.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { silentLogger, type Logger } from '../log.js';
import { span } from '../trace.js';

export interface WorkQueueOptions {
  /**
   * Converges one key. Throw to back off, TerminalError to give up, `requeueAfterMs` to come back.
   * `signal` aborts when the queue stops; what a stopped handler throws then is not logged or retried.
   */
  handler: (key: Key, signal: AbortSignal) => Promise<Result>;
  clock?: Clock;
  /** Reconciles running at once (default 4). */
  concurrency?: number;
  log?: Logger;
  /** First retry delay after a throw (default 5 ms); doubles per consecutive failure. */
  baseDelayMs?: number;
  /** Ceiling of the retry delay (default 5 min). */
  maxDelayMs?: number;
}

export interface WorkQueue {
  /** Schedules `key` now or after `afterMs`; duplicates coalesce and the earliest deadline wins. */
  add(key: Key, opts?: { afterMs?: number }): void;
  /**
   * Stops handing out keys, drops pending ones, aborts the signal running reconciles were given and
   * resolves when they have returned.
   */
  stop(): Promise<void>;
  /** Counts for status pages and tests. */
  stats(): { waiting: number; queued: number; running: number; failing: number };
}

/** Delay before the retry after the `failures`-th consecutive throw: base * 2^(failures-1), capped. */
export function backoffDelay(failures: number, baseMs = 5, maxMs = 300_000): number {
  if (failures <= 0) return 0;
  const exp = Math.min(failures - 1, 40);
  return Math.min(maxMs, baseMs * 2 ** exp);
}

export function createWorkQueue(opts: WorkQueueOptions): WorkQueue {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const base = opts.baseDelayMs ?? 5;
  const max = opts.maxDelayMs ?? 300_000;
  const pq = new PQueue({ concurrency: opts.concurrency ?? 4 });

  const waiting = new Map<Key, { at: number; timer: TimerHandle }>(); // delayed, not yet due
  const queued = new Set<Key>(); // due, handed to p-queue, not started
  const running = new Set<Key>();
  const dirty = new Set<Key>(); // due while running: run again when it finishes
  const failures = new Map<Key, number>();
  const stopping = new AbortController();
  let stopped = false;

  const clearWaiting = (key: Key) => {
    const w = waiting.get(key);
    if (w) clock.clearTimeout(w.timer);
    waiting.delete(key);
  };

  const ready = (key: Key) => {
    clearWaiting(key);
    if (stopped) return;
    if (running.has(key)) {
      dirty.add(key);
      return;
    }
    if (queued.has(key)) return;
    queued.add(key);
    // Hand over on the next microtask: p-queue starts a job synchronously, and adds made in the same tick
    // (a handler writing several rows) should coalesce into one run rather than one run and a rerun.
    queueMicrotask(() => {
      if (queued.has(key)) void pq.add(() => run(key));
    });
  };

  const add = (key: Key, o: { afterMs?: number } = {}) => {
    if (stopped) return;
    const afterMs = o.afterMs ?? 0;
    if (afterMs <= 0) return ready(key);
    if (queued.has(key) || dirty.has(key)) return; // already due sooner
    const at = clock.now() + afterMs;
    const w = waiting.get(key);
    if (w && w.at <= at) return;
    clearWaiting(key);
    waiting.set(key, { at, timer: clock.setTimeout(() => ready(key), afterMs) });
  };

  async function run(key: Key): Promise<void> {
    queued.delete(key);
    if (stopped) return;
    running.add(key);
    let next: number | undefined;
    try {
      const result = await span('pass', key, () => opts.handler(key, stopping.signal));
      failures.delete(key);
      next = result?.requeueAfterMs;
    } catch (err) {
      if (stopped) {
        log.debug('reconcile ended by the stop', { target: key, error: errMessage(err) });
      } else if (err instanceof TerminalError) {
        failures.delete(key);
        log.warn('reconcile failed (terminal, not retried)', { target: key, error: err.message });
      } else {
        const n = (failures.get(key) ?? 0) + 1;
        failures.set(key, n);
        next = backoffDelay(n, base, max);
        log.warn('reconcile failed; retrying', { target: key, error: errMessage(err), failures: n, retry_ms: next });
      }
    } finally {
      running.delete(key);
    }
    if (stopped) return;
    if (dirty.delete(key)) ready(key);
    else if (next !== undefined) add(key, { afterMs: next });
  }

  return {
    add,
    async stop() {
      stopped = true;
      stopping.abort(new Error('svc is stopping'));
      for (const key of [...waiting.keys()]) clearWaiting(key);
      pq.clear();
      queued.clear();
      dirty.clear();
      await pq.onIdle();
    },
    stats: () => ({ waiting: waiting.size, queued: queued.size, running: running.size, failing: failures.size }),
  };
}

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
