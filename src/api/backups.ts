// Backup endpoints (API.md "Backups"). Create inserts a `running` record and enqueues it: the answer is
// the record (201), the archive follows from the backup reconciler. Delete drops the record and enqueues
// `backup:files`, which removes the file. Download streams the finished archive.
import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { conflict, DomainError, invalid, notFound, unavailable, unprocessable } from '../errors.js';
import { backupJson, createBackup, getBackup, listBackups } from '../store/backups.js';
import { deleteBackup } from '../desired/backups.js';
import { ArchiveError } from '../backup/extract-archive.js';
import { importArchive } from '../backup/import.js';
import { KeyMismatchError } from '../backup/snapshot.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { idParam, restOrigin } from '../http/request.js';

/** Archive problems are the caller's: 400 (unreadable or hostile archive) or 422 (another encryption key). */
function refusal(err: unknown): never | void {
  if (err instanceof ArchiveError) throw invalid(err.message, undefined, 'invalid_archive');
  if (err instanceof KeyMismatchError) throw unprocessable('encryption_key_mismatch', err.message);
  if (err instanceof DomainError) throw err;
}

export function backupRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const backupOf = (c: Parameters<typeof idParam>[0]) => {
    const row = getBackup(db, idParam(c, 'id', 'backup'));
    if (!row) throw notFound('backup');
    return row;
  };

  r.get('/backups', (c) => c.json(listBackups(db).map(backupJson)));

  r.post('/backups', (c) => {
    if (deps.backups?.restoring()) throw conflict('a restore is running; create a backup when it has finished');
    const row = createBackup(db, deps.enqueue, { trigger: 'manual', now: deps.now() });
    deps.log.info('backup requested', { id: row.id, filename: row.filename });
    return c.json(backupJson(row), 201);
  });

  r.post('/backups/import', async (c) => {
    const row = await importArchive({ db, backupDir: deps.config.backupDir, now: deps.now() }, c.req.raw.body).catch((err) => {
      refusal(err);
      throw err;
    });
    deps.log.info('backup imported', { id: row.id, filename: row.filename, size: row.sizeBytes });
    return c.json(backupJson(row), 201);
  });

  r.post('/backups/:id/restore', async (c) => {
    const id = idParam(c, 'id', 'backup');
    if (!deps.backups) throw unavailable('not_configured', 'restores need the backup reconciler, which this server does not run');
    try {
      const { backup, safety } = await deps.backups.restore(id);
      return c.json({ restored: true, backup_id: backup.id, safety_backup_id: safety.id, restart_required: false });
    } catch (err) {
      if (err instanceof DomainError) throw err;
      refusal(err);
      // Our own failure (engine, disk): the previous state is back; say why.
      const reason = err instanceof Error ? err.message : String(err);
      deps.log.error('backup restore failed', { backup_id: id, error: reason });
      return c.json({ error: `restore failed and was rolled back: ${reason}`, code: 'restore_failed' }, 500);
    }
  });

  r.get('/backups/:id', (c) => c.json(backupJson(backupOf(c))));

  r.get('/backups/:id/download', (c) => {
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

  r.delete('/backups/:id', (c) => {
    deleteBackup(deps, idParam(c, 'id', 'backup'), restOrigin(c));
    return c.body(null, 204);
  });

  return r;
}
