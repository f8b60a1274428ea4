// Importing an archive made elsewhere, in two halves (DESIGN.md rule 13). The request only stores the
// upload: an `imports` row (`uploading`), the raw body streamed (capped) to `import-<id>.upload` in the
// backup dir, then `checking`. The `import:<id>` reconciler does the long part: unpack into a staging dir
// with every check of extractArchive, check its svc.db as a svc database, and publish the file under a
// fresh SPEC.md name with a `completed` backup record (trigger `import`), or fail the import with the
// reason. A refused archive leaves nothing behind but the failed `imports` row, which is the answer. An
// import of a copy in a backup target's bucket has a source instead of an upload: the same reconciler
// fetches it first (`download`, src/offsite/remote-import.ts), so no request downloads a whole archive.
import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Result } from '../controller/types.js';
import { invalid, tooLarge } from '../errors.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { insertWithFreeName } from '../store/backups.js';
import { deleteUploadingImport, getImport, importsIn, insertImport, updateImport, type ImportRow } from '../store/backup-ops.js';
import { ensureBackupDir } from './create-archive.js';
import { ArchiveError, extractArchive } from './extract-archive.js';
import { prepareSnapshot } from './snapshot.js';

/** Largest archive an import accepts (compressed). */
export const IMPORT_MAX_BYTES = 64 * 1024 ** 3;

export const uploadOf = (backupDir: string, id: number) => join(backupDir, `import-${id}.upload`);

/** The request's half: stores the body and answers the `checking` row. Refusals change nothing. */
export async function receiveUpload(d: { db: Db; backupDir: string; now: Date; maxBytes?: number }, body: ReadableStream<Uint8Array> | null): Promise<ImportRow> {
  if (!body) throw invalid('send the .tar.gz archive as the request body');
  const max = d.maxBytes ?? IMPORT_MAX_BYTES;
  await ensureBackupDir(d.backupDir);
  const row = insertImport(d.db, d.now);
  const file = uploadOf(d.backupDir, row.id);
  try {
    let received = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _e, cb) {
        received += chunk.length;
        if (received > max) return cb(tooLarge(`archive is larger than ${max} bytes`));
        cb(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(body as never), cap, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    if (received === 0) throw invalid('send the .tar.gz archive as the request body');
    const fh = await open(file, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    return updateImport(d.db, row.id, { status: 'checking', sizeBytes: received }, d.now);
  } catch (err) {
    await rm(file, { force: true });
    deleteUploadingImport(d.db, row.id);
    throw err;
  }
}

/** Fetches a remote import's copy into `dest` as a plaintext archive; its size. Errors may carry a `code`. */
export type DownloadCopy = (row: ImportRow, dest: string) => Promise<number>;

/** The reconciler's half: fetches a remote import's copy if it has none yet, checks the archive and settles it. */
export async function checkImport(d: { db: Db; backupDir: string; log: Logger; now(): Date; changed(): void; download?: DownloadCopy }, id: number): Promise<Result> {
  let row = getImport(d.db, id);
  if (!row || row.status !== 'checking') return {};
  const file = uploadOf(d.backupDir, id);
  await ensureBackupDir(d.backupDir);
  const staging = await mkdtemp(join(d.backupDir, `.staging-import-${id}-`));
  try {
    if (row.sourceKey !== null && !existsSync(file)) {
      if (!d.download) throw new Error('this daemon cannot fetch copies from backup targets');
      const size = await d.download(row, file);
      row = updateImport(d.db, id, { sizeBytes: size });
      d.log.info('backup copy fetched from target', { import_id: id, object: row.sourceKey, size });
    }
    if (!existsSync(file)) throw new ArchiveError('interrupted: the uploaded archive is gone (svc stopped while publishing it); upload it again');
    await extractArchive(file, staging);
    prepareSnapshot(join(staging, 'svc.db'), d.db, undefined);
    // Record, rename and settle in one transaction: a crash leaves either all of it or none.
    const backup = d.db.$client.transaction(() => {
      const b = insertWithFreeName(d.db, d.now(), { status: 'completed', trigger: 'import', sizeBytes: row!.sizeBytes });
      updateImport(d.db, id, { status: 'completed', backupId: b.id });
      renameSync(file, join(d.backupDir, b.filename));
      return b;
    })();
    d.log.info('backup imported', { import_id: id, id: backup.id, filename: backup.filename, size: backup.sizeBytes });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // A download failure's API.md code (lowercase words: target_unreachable, copy_corrupted...), not Node's ENOENT.
    const coded = (err as { code?: unknown }).code;
    const code = err instanceof ArchiveError ? 'invalid_archive' : typeof coded === 'string' && /^[a-z_]+$/.test(coded) ? coded : 'import_failed';
    updateImport(d.db, id, { status: 'failed', code, error: reason });
    d.log.warn('backup import refused', { import_id: id, error: reason });
    await rm(file, { force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
    d.changed();
  }
  return {};
}

export const INTERRUPTED_UPLOAD = 'interrupted: svc stopped while the archive was being uploaded; upload it again';

/** At start: an upload the previous process was receiving is failed and its file removed. */
export function recoverUploads(db: Db, backupDir: string): void {
  for (const row of importsIn(db, ['uploading'])) {
    updateImport(db, row.id, { status: 'failed', code: 'import_failed', error: INTERRUPTED_UPLOAD });
    rmSync(uploadOf(backupDir, row.id), { force: true });
  }
}
