// THE COMMANDS of the backup aggregate (backups, restores, imports): every entry point (REST, UI, CLI
// through REST, the schedule) changes its desired state here. A command checks the rules, writes the row
// and enqueues its key; the archive, the restore and the import checks are reconcilers' work (rule 13).
// `settled*` let a caller wait for that work without polling (progress.ts), bounded by its own signal.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { keyOf, type Enqueue } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { createBackup as insertRunning, deleteBackupRecord, getBackup, runningBackup, type BackupRow } from '../store/backups.js';
import { activeRestores, getImport, getRestore, insertRestore, type ImportRow, type RestoreRow } from '../store/backup-ops.js';
import { receiveUpload } from '../backup/import.js';
import type { Progress } from '../backup/progress.js';
import type { Origin } from './context.js';

export type { Origin } from './context.js';

export interface BackupContext {
  db: Db;
  enqueue: Enqueue;
  log: Logger;
  now: () => Date;
  backupDir: string;
  /** Present where the backup reconcilers run (the daemon); without it nothing can be waited for. */
  progress?: Progress;
}

const refuseWhileRestoring = (db: Db, what: string) => {
  const r = activeRestores(db)[0];
  if (r) throw conflict(`restore ${r.id} is running; ${what} when it has finished`, { restore_id: r.id });
};

/** A manual backup: a `running` record and its key. One at a time (409), never during a restore. */
export function createBackup(ctx: BackupContext, origin: Origin): BackupRow {
  refuseWhileRestoring(ctx.db, 'create a backup');
  const row = insertRunning(ctx.db, ctx.enqueue, { trigger: 'manual', now: ctx.now() });
  ctx.log.info('backup requested', { id: row.id, filename: row.filename, origin });
  return row;
}

/** The record once it is no longer `running`; undefined when the signal ended the wait first. */
export function settledBackup(ctx: BackupContext, id: number, signal?: AbortSignal): Promise<BackupRow | undefined> {
  return until(ctx, () => {
    const row = getBackup(ctx.db, id);
    if (!row) throw notFound('backup');
    return row.status === 'running' ? undefined : row;
  }, signal);
}

/**
 * Drops a finished backup's record; `backup:files` removes the file (the caller waits for that with
 * `archiveRemoved`). 409 while it runs. Answers the dropped record.
 */
export function deleteBackup(ctx: BackupContext, id: number, origin: Origin): BackupRow {
  const row = getBackup(ctx.db, id);
  if (!row) throw notFound('backup');
  if (row.status === 'running') throw conflict(`backup ${row.id} is still running; delete it when it has finished`);
  deleteBackupRecord(ctx.db, row.id);
  ctx.enqueue(keyOf('backup', 'files'));
  ctx.log.info('backup deleted', { id: row.id, filename: row.filename, origin });
  return row;
}

/** How long a delete waits for `backup:files` to remove the archive before it answers that it is still there. */
export const DELETE_WAIT_MS = 30_000;

/**
 * True once the archive of a deleted record is gone from the backup directory (woken by the backup
 * reconciler's `changed()` after it removes files, no polling); false when `waitMs` passed first or the
 * signal aborted. A record whose file never existed (a failed backup) is gone at once.
 */
export async function archiveRemoved(ctx: BackupContext, row: BackupRow, signal?: AbortSignal, waitMs = DELETE_WAIT_MS): Promise<boolean> {
  const path = join(ctx.backupDir, row.filename);
  const bound = AbortSignal.timeout(waitMs);
  const done = await until(ctx, () => (existsSync(path) ? undefined : true), signal ? AbortSignal.any([signal, bound]) : bound);
  return done === true;
}

/** Stores an uploaded archive and enqueues its checks (`import:<id>`); answers the `checking` row. */
export async function importUpload(ctx: BackupContext, body: ReadableStream<Uint8Array> | Readable | null, origin: Origin, maxBytes?: number): Promise<ImportRow> {
  const row = await receiveUpload({ db: ctx.db, backupDir: ctx.backupDir, now: ctx.now(), maxBytes }, body as ReadableStream<Uint8Array> | null);
  ctx.enqueue(keyOf('import', String(row.id)));
  ctx.log.info('backup import received', { import_id: row.id, size: row.sizeBytes, origin });
  return row;
}

export function settledImport(ctx: BackupContext, id: number, signal?: AbortSignal): Promise<ImportRow | undefined> {
  return until(ctx, () => {
    const row = getImport(ctx.db, id);
    if (!row) throw notFound('import');
    return row.status === 'completed' || row.status === 'failed' ? row : undefined;
  }, signal);
}

/**
 * Asks for a restore of a completed backup: a `pending` row and its key. One restore at a time, and not
 * while a backup is being written (its archive would miss the swap).
 */
export function requestRestore(ctx: BackupContext, backupId: number, origin: Origin): RestoreRow {
  const row = ctx.db.$client.transaction(() => {
    const backup = getBackup(ctx.db, backupId);
    if (!backup) throw notFound('backup');
    if (backup.status !== 'completed') throw conflict(`backup ${backupId} is ${backup.status}; only a completed backup can be restored`);
    refuseWhileRestoring(ctx.db, 'restore again');
    const busy = runningBackup(ctx.db);
    if (busy) throw conflict(`backup ${busy.id} is being written; restore when it has finished`, { running_id: busy.id });
    return insertRestore(ctx.db, backupId, ctx.now());
  })();
  ctx.enqueue(keyOf('restore', String(row.id)));
  ctx.log.info('backup restore requested', { restore_id: row.id, backup_id: backupId, origin });
  return row;
}

export function getRestoreOp(ctx: BackupContext, id: number): RestoreRow {
  const row = getRestore(ctx.db, id);
  if (!row) throw notFound('restore');
  return row;
}

export function settledRestore(ctx: BackupContext, id: number, signal?: AbortSignal): Promise<RestoreRow | undefined> {
  return until(ctx, () => {
    const row = getRestoreOp(ctx, id);
    return row.phase === 'completed' || row.phase === 'failed' ? row : undefined;
  }, signal);
}

async function until<T>(ctx: BackupContext, check: () => T | undefined, signal?: AbortSignal): Promise<T | undefined> {
  if (!ctx.progress) return check();
  return ctx.progress.until(check, signal);
}
