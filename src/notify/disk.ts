// The data directory's disk: checked every minute (the queue key `disk:data`, requeued); over 90 % used raises `disk_full` once (storm rule),
// back under 85 % raises `disk_ok` (only after a `disk_full` was sent). The gap keeps a disk hovering at
// 90 % from flapping.
import { statfs } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { Clock } from '../controller/clock.js';
import { periodic } from '../controller/periodic.js';
import type { Reconciler } from '../controller/types.js';
import type { Db } from '../store/db.js';
import type { Bus } from '../events/bus.js';
import { raise } from './raise.js';

export const DISK_FULL_PERCENT = 90;
export const DISK_OK_PERCENT = 85;

/** Pure: used percent as `df` shows it (blocks reserved for root count as neither used nor free). */
export function usedPercent(s: { blocks: number; bfree: number; bavail: number }): number {
  const used = s.blocks - s.bfree;
  const total = used + s.bavail;
  return total > 0 ? (used / total) * 100 : 0;
}

/** Pure: what a reading means. */
export function diskSignal(percent: number): 'fire' | 'resolve' | null {
  if (percent > DISK_FULL_PERCENT) return 'fire';
  if (percent < DISK_OK_PERCENT) return 'resolve';
  return null;
}

/** The reconciler of `disk:data`: a check at start, then every `intervalMs` (default 1 min); a failed one is logged. */
export function watchDisk(d: { db: Db; bus: Bus; dir: string; log: Logger; intervalMs?: number; clock?: Clock }): Reconciler {
  const check = async () => {
    try {
      const pct = usedPercent(await statfs(d.dir));
      const signal = diskSignal(pct);
      if (!signal) return;
      const shown = `${Math.round(pct)} %`;
      raise(d, {
        event: signal === 'fire' ? 'disk_full' : 'disk_ok',
        subject: signal === 'fire' ? `disk of the data directory is ${shown} full` : `disk of the data directory is back to ${shown} used`,
        message:
          signal === 'fire'
            ? `The file system holding svc's data directory is ${shown} used. Deploys, builds and backups fail when it fills: free space or move backups off this disk.`
            : `The file system holding svc's data directory is under ${DISK_OK_PERCENT} % used again.`,
        link: '/settings',
        storm: { key: 'disk:data', signal },
      });
    } catch (err) {
      d.log.warn('disk check failed', { error: (err as Error).message });
    }
  };
  return periodic({ kind: 'disk', name: 'data', periodMs: d.intervalMs ?? 60_000, pass: check, clock: d.clock });
}
