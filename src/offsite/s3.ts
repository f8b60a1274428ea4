// The S3 client of a backup target (AWS SDK v3: signing, retries and multipart are the SDK's, never ours)
// and the one sentence of a store's failure that is recorded and shown: the store's own error code and
// message, or the network error, never a credential.
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from './sdk.js';

/** A target with its credentials opened: only src/offsite and the commands that build it see this. */
export interface TargetConfig {
  name: string;
  endpoint: string | null;
  region: string;
  bucket: string;
  prefix: string;
  accessKey: string;
  secretKey: string;
}

export function s3ClientFor(t: TargetConfig): S3Client {
  return new (s3Sdk().S3Client)({
    endpoint: t.endpoint ?? undefined,
    region: t.region,
    // Garage, MinIO and most stand-ins answer path-style only; AWS itself is addressed virtual-host style.
    forcePathStyle: t.endpoint !== null,
    credentials: { accessKeyId: t.accessKey, secretAccessKey: t.secretKey },
    // Flexible checksums (CRC32 trailers) are the SDK's new default, which Garage v1, B2 and older MinIO
    // refuse; we verify with our own SHA-256 read back instead.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  Code?: string;
}

/** `NoSuchBucket (HTTP 404): The specified bucket does not exist`, or `ECONNREFUSED: connect ...`. */
export function storeReason(err: unknown): string {
  const e = (err ?? {}) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const code = e.Code ?? e.name ?? e.code ?? 'Error';
  let message = e.message ?? String(err);
  // A HEAD has no body: the SDK knows only the status; name it.
  if (message === 'UnknownError' || message === '') message = status === 403 ? 'access denied' : status === 404 ? 'not found' : 'no reason given';
  const cause = (err as { cause?: { code?: string } })?.cause?.code;
  const head = status ? `${code} (HTTP ${status})` : cause && !message.includes(cause) ? `${code} ${cause}` : code;
  return `${head}: ${message}`.slice(0, 500);
}

/** The object key of a backup file under a target's prefix. */
export const objectKey = (prefix: string, filename: string) => `${prefix}${filename}.age`;

/** Remote copies svc made: `<prefix>svc-backup-YYYYMMDD-HHMMSS.tar.gz.age`. Nothing else is ever deleted. */
export const REMOTE_NAME = /^svc-backup-\d{8}-\d{6}\.tar\.gz\.age$/;
