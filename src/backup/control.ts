// What the daemon's backup wiring hands the entry points: the signal its reconcilers give after every write
// of a backup, restore or import row, so a request that waits for one (POST /api/backups, an import, a
// restore by default) wakes at once. Restores and imports are persisted rows (src/desired/backups.ts),
// never in-memory promises: a request that goes away, or a daemon that restarts, loses nothing.
import type { Progress } from './progress.js';

export interface BackupControl {
  progress: Progress;
  /** How long `DELETE /api/backups/{id}` waits for its archive to go (default DELETE_WAIT_MS; tests shorten it). */
  deleteWaitMs?: number;
}
