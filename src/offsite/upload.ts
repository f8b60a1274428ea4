// One backup file to one target: read, encrypted (age), hashed (whole and per part) and sent in one
// stream; then the store's checksum or a read back verifies it (copy.ts). The archive is never copied: the
// file is read once, and memory holds about the SDK's parts in flight (QUEUE x PART_SIZE).
//
// No partial object under the final key: a multipart upload (lib-storage) creates the object only at its
// Complete call, and lib-storage aborts the upload when a part fails; a body under PART_SIZE is one
// PutObject, which the store publishes whole or not at all. A copy that does not verify is deleted before
// the failure is reported. Unfinished multipart uploads a dead daemon or a vanished store left under our
// key are aborted before the next attempt (abortStale).
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk, storageSdk } from './sdk.js';
import { encryptFile, type AgeKey } from './age.js';

export const PART_SIZE = 8 * 1024 * 1024;
/** Parts in flight: memory is about QUEUE x PART_SIZE plus stream buffers (bench:offsite). */
export const QUEUE = 4;

export interface Sent {
  sha256: string;
  size: number;
}

/** What was sent, with the SHA-256 of each PART_SIZE slice (how lib-storage cuts a stream into parts). */
export interface SentParts extends Sent {
  partDigests: Buffer[];
}

/** A pass-through that hashes and counts what flows through it, whole and per PART_SIZE slice. */
function hashing(partSize = PART_SIZE): Transform & { result(): SentParts } {
  const h = createHash('sha256');
  let part = createHash('sha256');
  let inPart = 0;
  const partDigests: Buffer[] = [];
  let size = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      size += chunk.length;
      for (let off = 0; off < chunk.length; ) {
        const n = Math.min(partSize - inPart, chunk.length - off);
        part.update(chunk.subarray(off, off + n));
        inPart += n;
        off += n;
        if (inPart === partSize) {
          partDigests.push(part.digest());
          part = createHash('sha256');
          inPart = 0;
        }
      }
      cb(null, chunk);
    },
  });
  return Object.assign(t, {
    result: () => ({ sha256: h.digest('hex'), size, partDigests: inPart > 0 || partDigests.length === 0 ? [...partDigests, part.digest()] : partDigests }),
  });
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

export async function sendEncrypted(o: { client: S3Client; bucket: string; key: string; file: string; age: AgeKey; signal?: AbortSignal }): Promise<SentParts> {
  const sealed = await encryptFile(o.file, o.age);
  const hash = hashing();
  sealed.on('error', (e) => hash.destroy(e));
  sealed.pipe(hash);
  const upload = new (storageSdk().Upload)({
    client: o.client,
    // SHA256: the SDK sends each part's x-amz-checksum-sha256 header (a store that knows it refuses a part
    // that arrives different, BadDigest) and the store can report what it holds (verifyByStore).
    params: { Bucket: o.bucket, Key: o.key, Body: hash, ContentType: 'application/octet-stream', ChecksumAlgorithm: 'SHA256' },
    partSize: PART_SIZE,
    queueSize: QUEUE,
    leavePartsOnError: false,
    abortController: o.signal ? abortOf(o.signal) : undefined,
  });
  try {
    await upload.done();
  } finally {
    sealed.destroy();
  }
  return hash.result();
}

/**
 * The store's own SHA-256 checksum of the object and its size (HeadObject, checksum mode on), or
 * undefined when it reports none (Garage v1, stores without additional checksums): then read back.
 */
export async function storeChecksum(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<{ checksum: string; size: number } | undefined> {
  const res = await client.send(new (s3Sdk().HeadObjectCommand)({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }), { abortSignal: signal });
  return res.ChecksumSHA256 ? { checksum: res.ChecksumSHA256, size: res.ContentLength ?? -1 } : undefined;
}

const abortOf = (signal: AbortSignal) => {
  const c = new AbortController();
  if (signal.aborted) c.abort();
  else signal.addEventListener('abort', () => c.abort(), { once: true });
  return c;
};

/** SHA-256 and size of the object as the store holds it, read back in one stream. */
export async function readBack(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<Sent> {
  const res = await client.send(new (s3Sdk().GetObjectCommand)({ Bucket: bucket, Key: key }), { abortSignal: signal });
  const hash = hashing();
  await pipeline(res.Body as Readable, hash, async function* (src) {
    for await (const _ of src) void _;
  });
  return hash.result();
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
