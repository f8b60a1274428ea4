// `POST /api/backups/import`: registers an archive made elsewhere. The raw body is streamed to a work
// file in the backup dir (capped), unpacked into a staging dir with every check of extractArchive, its
// svc.db checked as a svc database, then published under a fresh SPEC.md name with a `completed`
// record (trigger `import`). A refused archive leaves nothing behind.
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { renameSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { invalid, tooLarge } from '../errors.js';
import type { Db } from '../store/db.js';
import { deleteBackupRecord, insertWithFreeName, type BackupRow } from '../store/backups.js';
import { ensureBackupDir } from './create-archive.js';
import { extractArchive } from './extract-archive.js';
import { prepareSnapshot } from './snapshot.js';

/** Largest archive an import accepts (compressed). */
export const IMPORT_MAX_BYTES = 64 * 1024 ** 3;

export async function importArchive(d: { db: Db; backupDir: string; now: Date; maxBytes?: number }, body: ReadableStream<Uint8Array> | null): Promise<BackupRow> {
  if (!body) throw invalid('send the .tar.gz archive as the request body');
  const max = d.maxBytes ?? IMPORT_MAX_BYTES;
  await ensureBackupDir(d.backupDir);
  const work = join(d.backupDir, `.import-${randomBytes(6).toString('hex')}.partial`);
  const staging = await mkdtemp(join(d.backupDir, '.staging-import-'));
  try {
    let received = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _e, cb) {
        received += chunk.length;
        if (received > max) return cb(tooLarge(`archive is larger than ${max} bytes`));
        cb(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(body as never), cap, createWriteStream(work, { flags: 'wx', mode: 0o600 }));
    if (received === 0) throw invalid('send the .tar.gz archive as the request body');
    await extractArchive(work, staging);
    prepareSnapshot(join(staging, 'svc.db'), d.db, undefined);
    const fh = await open(work, 'r+');
    await fh.sync();
    await fh.close();
    const size = (await stat(work)).size;
    // Record and rename in one synchronous step: no reconcile can see a record without its file.
    const row = insertWithFreeName(d.db, d.now, { status: 'completed', trigger: 'import', sizeBytes: size });
    try {
      renameSync(work, join(d.backupDir, row.filename));
    } catch (err) {
      deleteBackupRecord(d.db, row.id);
      throw err;
    }
    return row;
  } finally {
    await rm(work, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}
