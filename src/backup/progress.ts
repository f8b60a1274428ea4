// How a request waits for the backup aggregate's reconcilers without polling: they call `changed()` after
// every write of a backup, restore or import row, and `until(check)` re-reads the row then. Both go through
// the daemon's Bus (event `backups`), the one in-process "look again" signal, as deploy streams do.
import { Bus } from '../controller/bus.js';

export interface Progress {
  /** A backup-aggregate row was written. */
  changed(): void;
  /** Resolves with `check()`'s first defined value, re-checked at every change; undefined when `signal` aborts. */
  until<T>(check: () => T | undefined, signal?: AbortSignal): Promise<T | undefined>;
}

export function createProgress(bus: Bus = new Bus()): Progress {
  return {
    changed: () => bus.emit('backups'),
    until: (check, signal) => bus.until('backups', check, signal),
  };
}
