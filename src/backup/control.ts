// What the API asks of the backup subsystem beyond desired-state writes: a restore is the backup
// reconciler's step (key `backup:restore-<id>`), and the request waits for its outcome, because API.md
// answers a restore with its result (200 `{restored, backup_id, safety_backup_id, restart_required}`).
// The hand-over is in memory: a daemon that dies mid-restore loses the waiting request, and the journal
// rolls the restore back at the next start (restore.ts).
import { keyOf, type Enqueue, type Result } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import type { Db } from '../store/db.js';
import { getBackup, runningBackup, type BackupRow } from '../store/backups.js';

export interface RestoreOutcome {
  backup: BackupRow;
  safety: BackupRow;
}

export interface BackupControl {
  /** Validates, enqueues the restore and resolves when it is done (rejects with its failure). */
  restore(id: number): Promise<RestoreOutcome>;
  /** True while a restore is requested or running. */
  restoring(): boolean;
}

interface Pending {
  row: BackupRow;
  resolve(o: RestoreOutcome): void;
  reject(e: unknown): void;
}

export interface RestoreQueue extends BackupControl {
  /** The backup reconciler's handler of `restore-<id>` names. */
  handle(name: string): Promise<Result>;
  names(): string[];
}

export function createRestoreQueue(d: { db: Db; enqueue: Enqueue; run(row: BackupRow): Promise<{ safety: BackupRow }> }): RestoreQueue {
  const pending = new Map<number, Pending>();
  return {
    restore(id) {
      const row = getBackup(d.db, id);
      if (!row) throw notFound('backup');
      if (row.status !== 'completed') throw conflict(`backup ${id} is ${row.status}; only a completed backup can be restored`);
      if (pending.size > 0) throw conflict('a restore is already running');
      const busy = runningBackup(d.db);
      if (busy) throw conflict(`backup ${busy.id} is being written; restore when it has finished`, { running_id: busy.id });
      const done = new Promise<RestoreOutcome>((resolve, reject) => pending.set(id, { row, resolve, reject }));
      d.enqueue(keyOf('backup', `restore-${id}`));
      return done;
    },
    restoring: () => pending.size > 0,
    async handle(name) {
      const id = Number(name.slice('restore-'.length));
      const p = pending.get(id);
      if (!p) return {};
      try {
        const { safety } = await d.run(p.row);
        p.resolve({ backup: p.row, safety });
      } catch (err) {
        p.reject(err);
      } finally {
        pending.delete(id);
      }
      return {};
    },
    names: () => [...pending.keys()].map((id) => `restore-${id}`),
  };
}
