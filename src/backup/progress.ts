// How a request waits for the backup aggregate's reconcilers without polling: they call `changed()` after
// every write of a backup, restore or import row, and `until(check)` re-reads the row then. The row stays
// the truth (a waiter that misses a call still sees the state at the next one, and a restarted daemon
// needs no waiter at all); this only says "look again now".

export interface Progress {
  /** A backup-aggregate row was written. */
  changed(): void;
  /** Resolves with `check()`'s first defined value, re-checked at every change; undefined when `signal` aborts. */
  until<T>(check: () => T | undefined, signal?: AbortSignal): Promise<T | undefined>;
}

export function createProgress(): Progress {
  const waiters = new Set<() => void>();
  return {
    changed() {
      for (const w of [...waiters]) w();
    },
    until<T>(check: () => T | undefined, signal?: AbortSignal) {
      return new Promise<T | undefined>((resolve, reject) => {
        const done = (v: T | undefined) => {
          waiters.delete(look);
          signal?.removeEventListener('abort', aborted);
          resolve(v);
        };
        const look = () => {
          try {
            const v = check();
            if (v !== undefined) done(v);
          } catch (err) {
            waiters.delete(look);
            reject(err);
          }
        };
        const aborted = () => done(undefined);
        if (signal?.aborted) return resolve(undefined);
        signal?.addEventListener('abort', aborted, { once: true });
        waiters.add(look);
        look();
      });
    },
  };
}
