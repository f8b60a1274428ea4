// The backups command (the part the REST API and the UI share today): deleting a finished backup.
import { keyOf } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import { deleteBackupRecord, getBackup } from '../store/backups.js';
import type { CommandCtx, Origin } from './context.js';

/** Deletes a finished backup's record; the backup reconciler removes the file. 409 while it runs. */
export function deleteBackup(ctx: CommandCtx, id: number, origin: Origin): void {
  const row = getBackup(ctx.db, id);
  if (!row) throw notFound('backup');
  if (row.status === 'running') throw conflict(`backup ${row.id} is still running; delete it when it has finished`);
  deleteBackupRecord(ctx.db, row.id);
  ctx.enqueue(keyOf('backup', 'files'));
  ctx.log.info('backup deleted', { id: row.id, filename: row.filename, origin });
}
