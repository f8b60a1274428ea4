// One backup file to one target: read, encrypted (age), hashed and sent in one stream, then read back and
// hashed again. The archive is never copied: the file is read once, and memory holds at most the SDK's
// parts in flight (QUEUE x PART_SIZE).
//
// No partial object under the final key: a multipart upload (lib-storage) creates the object only at its
// Complete call, and lib-storage aborts the upload when a part fails; a body under PART_SIZE is one
// PutObject, which the store publishes whole or not at all. A copy that reads back wrong is deleted before
// the failure is reported. Unfinished multipart uploads a dead daemon or a vanished store left under our
// key are aborted before the next attempt (abortStale).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk, storageSdk } from './sdk.js';
import { encryptStream, type AgeKey } from './age.js';

export const PART_SIZE = 8 * 1024 * 1024;
const QUEUE = 2;

export interface Sent {
  sha256: string;
  size: number;
}

/** A pass-through that hashes and counts what flows through it. */
function hashing(): Transform & { result(): Sent } {
  const h = createHash('sha256');
  let size = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  return Object.assign(t, { result: () => ({ sha256: h.digest('hex'), size }) });
}

export async function sendEncrypted(o: { client: S3Client; bucket: string; key: string; file: string; age: AgeKey; signal?: AbortSignal }): Promise<Sent> {
  const plain = Readable.toWeb(createReadStream(o.file)) as ReadableStream<Uint8Array>;
  const sealed = Readable.fromWeb((await encryptStream(plain, o.age)) as never);
  const hash = hashing();
  sealed.on('error', (e) => hash.destroy(e));
  sealed.pipe(hash);
  const upload = new (storageSdk().Upload)({
    client: o.client,
    params: { Bucket: o.bucket, Key: o.key, Body: hash, ContentType: 'application/octet-stream' },
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
