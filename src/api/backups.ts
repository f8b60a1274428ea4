// Backup endpoints (API.md "Backups"), thin adapters over src/desired/backups.ts. Creating a backup and
// importing an archive wait for the reconciler's work and answer its outcome (SPEC.md 4.6); `?wait=false`
// answers 202 at once with the record to poll. A restore is a persisted operation (a `restores` row) and
// waits for it the same way, answering API.md's 200; `?wait=false` answers 202 with the row to follow.
import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Hono, type Context } from 'hono';
import { conflict, DomainError, invalid, notFound, unavailable } from '../errors.js';
import { getBackup, listBackups, type BackupRow } from '../store/backups.js';
import { getImport, listRestores, type ImportRow, type RestoreRow } from '../store/backup-ops.js';
import {
  archiveRemoved, createBackup, deleteBackup, getRestoreOp, importUpload, requestRestore, settledBackup, settledImport, settledRestore, type BackupContext,
} from '../desired/backups.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { idParam, restOrigin } from '../http/request.js';
import { backupWithCopiesJson, importJson, restoreJson } from '../presenters/backups.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { backupJsonSchema, importJsonSchema, restoreJsonSchema } from '../presenters/backups.js';

const op = operations('Backups');

/** A completed restore (API.md's 200). */
const restoredSchema = z.object({ restored: z.literal(true), restore_id: z.number().int(), backup_id: z.number().int(), safety_backup_id: z.number().int().nullable(), restart_required: z.boolean() });

/** The commands' context as this server runs them. */
/** DELETE /backups/{id} past its wait: the record is gone, the archive not yet. */
const deletedBackupJsonSchema = z
  .object({ deleted: z.literal(true), id: z.number().int(), filename: z.string(), archive_removed: z.literal(false), message: z.string() })
  .meta({ id: 'BackupDeletedArchiveKept' });

export function backupContext(deps: ApiDeps): BackupContext {
  return { db: deps.db, enqueue: deps.enqueue, log: deps.log, now: deps.now, backupDir: deps.config.backupDir, progress: deps.backups?.progress };
}

/** HTTP status of a failed restore or import, by its code (API.md). */
export const failureStatus = (code: string | null) =>
  code === 'invalid_archive' ? 400 : code === 'encryption_key_mismatch' ? 422 : code === 'service_on_other_node' ? 409 : 500;

/** A settled restore as API.md's restore answer (200), or its failure as `{error, code, restore}`. */
export function restoreOutcome(c: Context, row: RestoreRow) {
  if (row.phase === 'completed') {
    return c.json({ restored: true, restore_id: row.id, backup_id: row.backupId, safety_backup_id: row.safetyBackupId, restart_required: false });
  }
  return c.json({ error: row.error, code: row.code, restore: restoreJson(row) }, failureStatus(row.code));
}

function importOutcome(c: Context, deps: ApiDeps, row: ImportRow) {
  const backup = row.backupId ? getBackup(deps.db, row.backupId) : undefined;
  if (row.status === 'completed' && backup) return c.json(backupWithCopiesJson(deps.db, backup), 201);
  return c.json({ error: row.error ?? 'the import failed', code: row.code ?? 'import_failed', import: importJson(row) }, failureStatus(row.code));
}

const waits = (c: Context, dflt: boolean) => {
  const w = c.req.query('wait');
  if (w === undefined) return dflt;
  if (w === 'true' || w === '1') return true;
  if (w === 'false' || w === '0') return false;
  throw invalid('wait must be true or false', undefined, 'validation_failed');
};

export function backupRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const backupJson = (row: BackupRow) => backupWithCopiesJson(db, row);
  const ctx = backupContext(deps);
  const backupOf = (c: Context) => {
    const row = getBackup(db, idParam(c, 'id', 'backup'));
    if (!row) throw notFound('backup');
    return row;
  };

  r.get('/backups', op({ summary: 'Backups, newest first', response: z.array(backupJsonSchema) }), (c) => c.json(listBackups(db).map(backupJson)));

  r.post('/backups', op({ summary: 'Take a backup: waits for it (201), or 202 at once with ?wait=false', query: { wait: 'false: answer 202 at once' }, status: 201, response: backupJsonSchema, more: { 202: { description: 'Started (wait=false), or the client left before it ended: poll Location' } }, errors: { 400: 'validation_failed: bad wait', 409: 'conflict: a backup or restore is running', 500: 'backup_failed (the record, with its error)' } }), async (c) => {
    const wait = waits(c, true);
    const row = createBackup(ctx, restOrigin(c));
    // Without the backup reconciler (a server that runs none) there is nothing to wait for.
    if (!wait || !deps.backups) return c.json(backupJson(row), 202, { location: `/api/backups/${row.id}` });
    const done = await settledBackup(ctx, row.id, c.req.raw.signal);
    if (!done) return c.json(backupJson(getBackup(db, row.id) ?? row), 202); // the client went away
    if (done.status === 'failed') return c.json({ ...backupJson(done), code: 'backup_failed' }, 500);
    return c.json(backupJson(done), 201);
  });

  r.post('/backups/import', op({ summary: 'Import a backup archive (the body is the archive)', bodyMedia: { type: 'application/octet-stream', description: 'a svc backup archive (.tar.gz)' }, query: { wait: 'false: answer 202 at once' }, status: 201, response: backupJsonSchema, more: { 202: { description: 'Started: poll /api/backups/imports/{id}', response: importJsonSchema } }, errors: { 400: 'invalid_archive', 409: 'conflict', 413: 'too_large', 422: 'encryption_key_mismatch' } }), async (c) => {
    const wait = waits(c, true);
    const row = await importUpload(ctx, c.req.raw.body, restOrigin(c));
    if (!wait || !deps.backups) return c.json(importJson(row), 202, { location: `/api/backups/imports/${row.id}` });
    const done = await settledImport(ctx, row.id, c.req.raw.signal);
    if (!done) return c.json(importJson(getImport(db, row.id) ?? row), 202);
    return importOutcome(c, deps, done);
  });

  r.get('/backups/imports/:id', op({ summary: 'An import run', response: importJsonSchema }), (c) => {
    const row = getImport(db, idParam(c, 'id', 'import'));
    if (!row) throw notFound('import');
    return c.json(importJson(row));
  });

  r.post('/backups/:id/restore', op({ summary: 'Restore a backup (takes a safety backup first); waits for it', query: { wait: 'false: answer 202 at once' }, response: restoredSchema, more: { 202: { description: 'Started: poll Location (/api/restores/{id})', response: restoreJsonSchema } }, errors: { 400: 'invalid_archive', 409: 'conflict: a backup or restore is running; service_on_other_node', 422: 'encryption_key_mismatch' } }), async (c) => {
    const id = idParam(c, 'id', 'backup');
    if (!deps.backups) throw unavailable('not_configured', 'restores need the backup reconcilers, which this server does not run');
    const wait = waits(c, true);
    const row = requestRestore(ctx, id, restOrigin(c));
    if (!wait) return c.json(restoreJson(row), 202, { location: `/api/restores/${row.id}` });
    const done = await settledRestore(ctx, row.id, c.req.raw.signal);
    if (!done) return c.json(restoreJson(getRestoreOp(ctx, row.id)), 202, { location: `/api/restores/${row.id}` });
    return restoreOutcome(c, done);
  });

  r.get('/restores', op({ summary: 'Restore runs', response: z.array(restoreJsonSchema) }), (c) => c.json(listRestores(db).map(restoreJson)));
  r.get('/restores/:id', op({ summary: 'One restore run', response: restoreJsonSchema }), (c) => c.json(restoreJson(getRestoreOp(ctx, idParam(c, 'id', 'restore')))));

  r.get('/backups/:id', op({ summary: 'One backup with its off-host copies', response: backupJsonSchema }), (c) => c.json(backupJson(backupOf(c))));

  r.get('/backups/:id/download', op({ summary: 'Download the archive (holds every secret in clear: audited)', media: { type: 'application/gzip', description: 'the backup archive' }, errors: { 409: 'conflict: not completed' } }), (c) => {
    const row = backupOf(c);
    if (row.status !== 'completed') throw conflict(`backup ${row.id} is ${row.status}; only a completed backup has an archive`);
    const path = join(deps.config.backupDir, row.filename);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new DomainError('not_found', 'not_found', `the archive of backup ${row.id} is missing from the backup directory`);
    }
    const stream = Readable.toWeb(createReadStream(path)) as ReadableStream;
    return c.body(stream, 200, {
      'content-type': 'application/gzip',
      'content-length': String(size),
      'content-disposition': `attachment; filename="${row.filename}"`,
      'cache-control': 'no-store',
    });
  });

  // 204 once the record and its archive are both gone: the request waits for `backup:files` (bounded);
  // past the bound, 202 says the record is gone and the file still on disk (removed at that key's next pass).
  r.delete('/backups/:id', op({ summary: 'Delete a backup', status: 204, more: { 202: { description: 'The archive is still there after the wait: a sentence says so (it goes when the reconciler runs)', response: deletedBackupJsonSchema } }, errors: { 409: 'conflict: running, or being restored' } }), async (c) => {
    const row = deleteBackup(ctx, idParam(c, 'id', 'backup'), restOrigin(c));
    if (await archiveRemoved(ctx, row, c.req.raw.signal, deps.backups?.deleteWaitMs)) return c.body(null, 204);
    return c.json(
      {
        deleted: true,
        id: row.id,
        filename: row.filename,
        archive_removed: false,
        message: `backup ${row.id} is deleted, but its archive ${row.filename} is still in the backup directory: svc removes it at its next pass over the backup files`,
      },
      202,
    );
  });

  return r;
}
