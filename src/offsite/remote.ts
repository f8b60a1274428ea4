// What a bucket holds under a target's prefix: the copies svc made (listed for a fresh install to import,
// and for remote retention), the retention decision (pure), and one copy fetched back as plaintext.
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from './sdk.js';
import { Readable } from 'node:stream';
import { decryptStream, type AgeSecret } from './age.js';
import { REMOTE_NAME } from './s3.js';

export interface RemoteCopy {
  key: string;
  /** The archive's file name (`svc-backup-...tar.gz`). */
  filename: string;
  size: number;
  lastModified: string | null;
}

/** Copies under the prefix, newest first (the name carries the backup's UTC time). */
export async function listRemote(client: S3Client, bucket: string, prefix: string, signal?: AbortSignal): Promise<RemoteCopy[]> {
  const out: RemoteCopy[] = [];
  let token: string | undefined;
  do {
    const res = await client.send(new (s3Sdk().ListObjectsV2Command)({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }), { abortSignal: signal });
    for (const o of res.Contents ?? []) {
      const rest = (o.Key ?? '').slice(prefix.length);
      if (!REMOTE_NAME.test(rest)) continue;
      out.push({ key: o.Key!, filename: rest.slice(0, -'.age'.length), size: o.Size ?? 0, lastModified: o.LastModified?.toISOString() ?? null });
    }
    token = res.IsTruncated ? res.NextContinuationToken : undefined;
  } while (token);
  return out.sort((a, b) => (a.filename < b.filename ? 1 : a.filename > b.filename ? -1 : 0));
}

/** Copies beyond the newest `keep` (pure): what remote retention deletes. */
export const beyondRemoteRetention = (newestFirst: RemoteCopy[], keep: number): RemoteCopy[] => newestFirst.slice(Math.max(keep, 1));

/** The plaintext archive of a copy, streamed: rejects at once on a wrong passphrase or identity. */
export async function openRemote(client: S3Client, bucket: string, key: string, secret: AgeSecret, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const res = await client.send(new (s3Sdk().GetObjectCommand)({ Bucket: bucket, Key: key }), { abortSignal: signal });
  const body = Readable.toWeb(res.Body as Readable) as ReadableStream<Uint8Array>;
  return decryptStream(body, secret);
}
