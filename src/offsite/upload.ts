// One backup file to one target: read, encrypted (age), hashed (whole and per part) and sent, then the
// store's checksum or a read back verifies it (copy.ts). The archive is never copied on disk nor held in
// memory: it is read 1 MiB at a time and each chunk's ciphertext is copied straight into one of QUEUE + 1
// part buffers allocated once per copy (part-pool.ts), reused once its UploadPart has settled. Memory is
// that pool, bounded, and next to no garbage: the first copy of a daemon stays within its goal
// (bench:offsite; lib-storage, used before, copied every part: docs/decisions/0036-offsite-copies.md).
//
// No partial object under the final key: a multipart upload creates the object only at its Complete call
// and is aborted when anything fails (multipart.ts); a body under PART_SIZE is one PutObject, which the
// store publishes whole or not at all. A copy that does not verify is deleted before the failure is
// reported. Unfinished multipart uploads a dead daemon or a vanished store left under our key are aborted
// before the next attempt (abortStale).
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from './sdk.js';
import { encryptFileTo, type AgeKey } from './age.js';
import { PartPool } from './part-pool.js';
import { PartSplitter } from './part-splitter.js';
import { PartSender } from './multipart.js';

export const PART_SIZE = 8 * 1024 * 1024;
/** Parts in flight; the pool holds one more, the part being filled: memory ~ (QUEUE + 1) x PART_SIZE. */
export const QUEUE = 4;

export interface Sent {
  sha256: string;
  size: number;
}

/** What was sent, with the SHA-256 of each part (PART_SIZE bytes, the last one the rest). */
export interface SentParts extends Sent {
  partDigests: Buffer[];
}

export async function sendEncrypted(o: { client: S3Client; bucket: string; key: string; file: string; age: AgeKey; signal?: AbortSignal }): Promise<SentParts> {
  const pool = new PartPool(QUEUE + 1, PART_SIZE);
  const sender = new PartSender({ client: o.client, bucket: o.bucket, key: o.key, pool, signal: o.signal });
  const parts = new PartSplitter(pool, sender.send);
  let sent: SentParts;
  try {
    await encryptFileTo(o.file, o.age, (b) => parts.write(b));
    sent = await parts.end();
  } catch (e) {
    return sender.fail(e);
  }
  await sender.finish();
  return sent;
}

/**
 * The checksum a store reports for what we sent (S3 "additional checksums", SHA-256): one PutObject (under
 * PART_SIZE) is the object's SHA-256 in base64; a multipart upload is COMPOSITE, the SHA-256 of the parts'
 * digests, then `-<parts>`.
 */
export function expectedStoreChecksum(s: SentParts): string {
  if (s.partDigests.length === 1) return Buffer.from(s.sha256, 'hex').toString('base64');
  return `${createHash('sha256').update(Buffer.concat(s.partDigests)).digest('base64')}-${s.partDigests.length}`;
}

/**
 * The store's own SHA-256 checksum of the object and its size (HeadObject, checksum mode on), or
 * undefined when it reports none (Garage v1, stores without additional checksums): then read back.
 */
export async function storeChecksum(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<{ checksum: string; size: number } | undefined> {
  const res = await client.send(new (s3Sdk().HeadObjectCommand)({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }), { abortSignal: signal });
  return res.ChecksumSHA256 ? { checksum: res.ChecksumSHA256, size: res.ContentLength ?? -1 } : undefined;
}

/** SHA-256 and size of the object as the store holds it, read back in one stream. */
export async function readBack(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<Sent> {
  const res = await client.send(new (s3Sdk().GetObjectCommand)({ Bucket: bucket, Key: key }), { abortSignal: signal });
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of res.Body as Readable) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: h.digest('hex'), size };
}

export async function deleteObject(client: S3Client, bucket: string, key: string): Promise<void> {
  await client.send(new (s3Sdk().DeleteObjectCommand)({ Bucket: bucket, Key: key }));
}

/** Aborts unfinished multipart uploads of exactly `key` (left by a killed daemon or a vanished store). */
export async function abortStale(client: S3Client, bucket: string, key: string): Promise<number> {
  const res = await client.send(new (s3Sdk().ListMultipartUploadsCommand)({ Bucket: bucket, Prefix: key }));
  let n = 0;
  for (const u of res.Uploads ?? []) {
    if (u.Key !== key || !u.UploadId) continue;
    await client.send(new (s3Sdk().AbortMultipartUploadCommand)({ Bucket: bucket, Key: key, UploadId: u.UploadId }));
    n++;
  }
  return n;
}
