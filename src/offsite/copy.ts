// One attempt at an off-host copy, start to verified: abort what an earlier attempt left, send (encrypt +
// hash on the way), verify, then remote retention. Throws `CopyError` with the store's reason; the caller
// records it. A copy that does not verify is deleted first, so the key never holds bytes that were not
// verified for longer than the check takes.
//
// Verification: the store's own SHA-256 checksum of what it holds when it reports one (AWS S3, MinIO, R2:
// a HEAD, no second transfer), else a full read back (Garage v1 and stores without additional checksums).
import { access } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { AgeKey } from './age.js';
import { beyondRemoteRetention, listRemote } from './remote.js';
import { storeReason } from './s3.js';
import { abortStale, deleteObject, expectedStoreChecksum, readBack, sendEncrypted, storeChecksum, type Sent, type SentParts } from './upload.js';

export class CopyError extends Error {}

export interface CopyInput {
  client: S3Client;
  bucket: string;
  prefix: string;
  key: string;
  file: string;
  age: AgeKey | undefined;
  retain: number;
  signal?: AbortSignal;
}

export interface CopyOutcome extends Sent {
  /** How the copy was checked: the store's own SHA-256 checksum, or the object read back and hashed. */
  verifiedBy: 'store_checksum' | 'read_back';
  /** Keys remote retention deleted. */
  pruned: string[];
  /** Why retention could not run (the copy itself is verified all the same). */
  retentionError?: string;
}

const step = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CopyError) throw err;
    throw new CopyError(`${what}: ${storeReason(err)}`);
  }
};

export async function copyToTarget(i: CopyInput): Promise<CopyOutcome> {
  if (!i.age) {
    throw new CopyError('no SVC_BACKUP_PASSPHRASE or SVC_BACKUP_AGE_RECIPIENT is set: an archive holds SVC_ENCRYPTION_KEY and is never sent in clear');
  }
  const age = i.age;
  // After `svc restore FILE` the records of older backups come back without their archives.
  if (!(await access(i.file).then(() => true, () => false))) throw new CopyError('the local archive is missing from the backup directory; there is nothing to copy');
  // A store without multipart listing (some stand-ins) is not a reason to fail the copy.
  await abortStale(i.client, i.bucket, i.key).catch(() => 0);
  const sent = await step('upload', () => sendEncrypted({ client: i.client, bucket: i.bucket, key: i.key, file: i.file, age, signal: i.signal }));
  const verifiedBy = await step('verification', () => verify(i, sent));
  const out: CopyOutcome = { sha256: sent.sha256, size: sent.size, verifiedBy, pruned: [] };
  try {
    const extra = beyondRemoteRetention(await listRemote(i.client, i.bucket, i.prefix, i.signal), i.retain);
    for (const c of extra) {
      await deleteObject(i.client, i.bucket, c.key);
      out.pruned.push(c.key);
    }
  } catch (err) {
    out.retentionError = storeReason(err);
  }
  return out;
}

/** Compares what the store holds with what was sent; deletes the copy and throws when they differ. */
async function verify(i: CopyInput, sent: SentParts): Promise<CopyOutcome['verifiedBy']> {
  const reported = await storeChecksum(i.client, i.bucket, i.key, i.signal);
  const expected = expectedStoreChecksum(sent);
  if (reported) {
    if (reported.checksum === expected && reported.size === sent.size) return 'store_checksum';
    await deleteObject(i.client, i.bucket, i.key).catch(() => {});
    throw new CopyError(
      `verification: the store reports ${reported.size} bytes with SHA-256 checksum ${reported.checksum.slice(0, 16)}…, ` +
        `${sent.size} bytes with ${expected.slice(0, 16)}… were sent; the copy was deleted`,
    );
  }
  const held = await step('read back', () => readBack(i.client, i.bucket, i.key, i.signal));
  if (held.sha256 === sent.sha256 && held.size === sent.size) return 'read_back';
  await deleteObject(i.client, i.bucket, i.key).catch(() => {});
  throw new CopyError(
    `verification: the store holds ${held.size} bytes with SHA-256 ${held.sha256.slice(0, 16)}…, ` +
      `${sent.size} bytes with ${sent.sha256.slice(0, 16)}… were sent; the copy was deleted`,
  );
}
