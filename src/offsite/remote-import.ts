// The long half of importing a copy from a backup target (POST /api/backup-targets/{id}/remote/import): the
// import reconciler downloads the object, decrypts it with SVC_BACKUP_PASSPHRASE and writes the plaintext
// archive where an uploaded one would be, then checks it like any upload (src/backup/import.ts). The request
// only records the row. Each failure carries the code the request used to answer with.
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Sealer } from '../crypto.js';
import type { ImportRow } from '../store/backup-ops.js';
import type { Db } from '../store/db.js';
import { getTarget, openCredentials } from '../store/offsite.js';
import { openRemote } from './remote.js';
import { s3ClientFor, storeReason } from './s3.js';

/** A remote import that failed, with its API.md code (target_unreachable, backup_key_missing, ...). */
export class RemoteImportError extends Error {
  constructor(readonly code: 'target_unreachable' | 'backup_key_missing' | 'backup_key_mismatch' | 'copy_corrupted', message: string) {
    super(message);
  }
}

export interface RemoteImportDeps {
  db: Db;
  sealer: Sealer;
  /** SVC_BACKUP_PASSPHRASE, read when the copy is fetched. */
  passphrase: string | undefined;
}

/**
 * Downloads and decrypts the import's source copy into `dest` (through `dest.part`, renamed once whole and
 * synced, so a crash leaves no half archive that would pass for a whole one); returns its size in bytes.
 */
export async function downloadRemoteCopy(d: RemoteImportDeps, imp: ImportRow, dest: string): Promise<number> {
  const key = imp.sourceKey!;
  const target = imp.sourceTargetId === null ? undefined : getTarget(d.db, imp.sourceTargetId);
  if (!target) throw new RemoteImportError('target_unreachable', `the backup target of ${key} was deleted before the copy was fetched`);
  if (!d.passphrase) throw new RemoteImportError('backup_key_missing', 'SVC_BACKUP_PASSPHRASE is not set: this daemon cannot decrypt the copy');
  const c = openCredentials(d.sealer, target);
  const client = s3ClientFor({ name: target.name, endpoint: target.endpoint, region: target.region, bucket: target.bucket, prefix: target.prefix, accessKey: c.access_key, secretKey: c.secret_key });
  const part = `${dest}.part`;
  try {
    let plain: ReadableStream<Uint8Array>;
    try {
      plain = await openRemote(client, target.bucket, key, { passphrase: d.passphrase });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      if (/passphrase|age/i.test(msg) && !(err as { $metadata?: unknown }).$metadata) throw new RemoteImportError('backup_key_mismatch', `cannot decrypt ${key}: ${msg}`);
      throw new RemoteImportError('target_unreachable', `the store answered: ${storeReason(err)}`);
    }
    let size = 0;
    try {
      const count = async function* (src: AsyncIterable<Buffer>) {
        for await (const chunk of src) {
          size += chunk.length;
          yield chunk;
        }
      };
      await pipeline(Readable.fromWeb(plain as never), count, createWriteStream(part, { flags: 'w', mode: 0o600 }));
    } catch (err) {
      // age authenticates every chunk: a copy changed in the bucket (or cut off) stops here, nothing kept.
      throw new RemoteImportError('copy_corrupted', `${key} did not decrypt whole (tampered with or truncated): ${err instanceof Error ? err.message : String(err)}`);
    }
    const fh = await open(part, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(part, dest);
    return size;
  } finally {
    client.destroy();
    await rm(part, { force: true });
  }
}
