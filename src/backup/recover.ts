// At daemon start, before any reconcile: a record still `running` belongs to a process that died while
// writing it. Its archive is published only after fsync and rename, so a file under its name is complete
// (the crash fell between the rename and the record update) and the record is completed; otherwise the
// record fails with the reason. The work files the dead process left (dot-names) are removed here, before
// the API or a reconciler can start writing new ones.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { NoticeTarget } from '../notify/raise.js';
import { completeBackup, failBackup, runningBackups } from '../store/backups.js';
import { backupFailed } from './notices.js';

export const INTERRUPTED = 'interrupted: svc stopped while the archive was being written; no partial archive was kept';

/** Settles the records an earlier process left `running`. Returns how many it settled. */
export function recoverInterruptedBackups(to: NoticeTarget, backupDir: string, log: Logger): number {
  const { db } = to;
  const rows = runningBackups(db);
  for (const row of rows) {
    let size: number | undefined;
    try {
      size = statSync(join(backupDir, row.filename)).size;
    } catch {
      size = undefined;
    }
    if (size !== undefined) {
      completeBackup(db, row.id, size);
      log.info('backup created', { id: row.id, filename: row.filename, size, recovered: true });
    } else {
      db.transaction(() => {
        failBackup(db, row.id, INTERRUPTED);
        backupFailed(to, row, INTERRUPTED);
      });
      log.error('backup failed', { id: row.id, filename: row.filename, trigger: row.trigger, error: INTERRUPTED });
    }
  }
  let names: string[] = [];
  try {
    names = readdirSync(backupDir);
  } catch {
    names = [];
  }
  for (const f of names) if (f.startsWith('.')) rmSync(join(backupDir, f), { recursive: true, force: true });
  return rows.length;
}
