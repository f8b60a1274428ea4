// The upload half of an off-host copy: parts (part-splitter.ts) sent with the SDK's own commands
// (CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload; PutObject for a copy
// of one part). Signing, retries of a request and the HTTP client stay the SDK's. lib-storage's Upload did
// this before; it was left because it copies every part (it concatenates a stream's chunks into a new
// buffer per part), which made the first copy of a daemon miss its memory goal (docs/decisions/0036-offsite-copies.md). Kept of
// its behaviour: one PutObject when the body is a single part; parts in flight bounded (here by the pool);
// a missing ETag is an error; the parts' store checksums passed on to Complete; on any failure, the
// parts in flight settle and the upload is aborted (no partial object: S3 publishes a key only at
// Complete); the first failure is what is thrown.
import type { S3Client } from '@aws-sdk/client-s3';
import type { BuildMiddleware, MiddlewareStack } from '@smithy/types'; // the SDK's own types (a dependency of client-s3)
import type { PartPool } from './part-pool.js';
import type { Part } from './part-splitter.js';
import { s3Sdk } from './sdk.js';

/** S3's limit on the parts of one upload. */
export const MAX_PARTS = 10_000;

interface Done {
  PartNumber: number;
  ETag: string;
  ChecksumSHA256?: string;
}

/**
 * Sets the SigV4 payload hash (`x-amz-content-sha256`) to the part's SHA-256 we already have: the signer
 * then signs with it instead of hashing the body again. The store recomputes it and refuses a part that
 * differs (XAmzContentSHA256Mismatch): a wrong digest fails the copy, never passes it.
 */
function usePayloadHash<I extends object, O extends object>(stack: MiddlewareStack<I, O>, digest: Buffer): void {
  const mw: BuildMiddleware<I, O> = (next) => async (args) => {
    const req = args.request as { headers?: Record<string, string> };
    if (req.headers) req.headers['x-amz-content-sha256'] = digest.toString('hex');
    return next(args);
  };
  // Build step, high priority: after serialization, before the signer (finalize).
  stack.add(mw, { step: 'build', priority: 'high', name: 'svcPayloadHash' });
}

export class PartSender {
  private uploadId: Promise<string> | undefined;
  private readonly settling = new Set<Promise<void>>();
  private readonly done: Done[] = [];
  private failure: { error: unknown } | undefined;
  private single = false;

  constructor(
    private readonly o: { client: S3Client; bucket: string; key: string; pool: PartPool; signal?: AbortSignal },
  ) {}

  /** Starts a part's upload; its buffer goes back to the pool once it settles. Throws once anything failed. */
  readonly send = (p: Part): void => {
    if (this.failure) throw this.failure.error;
    this.o.signal?.throwIfAborted();
    if (p.number > MAX_PARTS) throw new Error(`the copy is larger than S3's ${MAX_PARTS} parts of ${this.o.pool.size} bytes`);
    const run = p.number === 1 && p.last ? this.put(p) : this.part(p);
    const settled: Promise<void> = run
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => {
        this.settling.delete(settled);
        this.o.pool.give(p.buffer);
      });
    this.settling.add(settled);
  };

  /** Once every part is handed on: waits for them, then completes the upload (or aborts it and throws). */
  async finish(): Promise<void> {
    await this.settle();
    if (this.failure) return this.abortWith(this.failure.error);
    if (this.single) return;
    const sdk = s3Sdk();
    try {
      await this.o.client.send(
        new sdk.CompleteMultipartUploadCommand({
          Bucket: this.o.bucket,
          Key: this.o.key,
          UploadId: await this.uploadId!,
          MultipartUpload: { Parts: [...this.done].sort((a, b) => a.PartNumber - b.PartNumber) },
        }),
        { abortSignal: this.o.signal },
      );
    } catch (e) {
      return this.abortWith(e);
    }
  }

  /** The writer failed (or stopped on our failure): waits for the parts in flight, aborts, throws the first failure. */
  async fail(error: unknown): Promise<never> {
    this.failure ??= { error };
    await this.settle();
    return this.abortWith(this.failure.error);
  }

  private async settle(): Promise<void> {
    while (this.settling.size) await Promise.all([...this.settling]);
  }

  private async put(p: Part): Promise<void> {
    this.single = true;
    const cmd = new (s3Sdk().PutObjectCommand)({
      Bucket: this.o.bucket,
      Key: this.o.key,
      Body: p.data,
      ContentLength: p.data.length,
      ContentType: 'application/octet-stream',
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: p.digest.toString('base64'),
    });
    usePayloadHash(cmd.middlewareStack, p.digest);
    await this.o.client.send(cmd, { abortSignal: this.o.signal });
  }

  private async part(p: Part): Promise<void> {
    const sdk = s3Sdk();
    this.uploadId ??= this.o.client
      .send(new sdk.CreateMultipartUploadCommand({ Bucket: this.o.bucket, Key: this.o.key, ContentType: 'application/octet-stream', ChecksumAlgorithm: 'SHA256' }), { abortSignal: this.o.signal })
      .then((r) => {
        if (!r.UploadId) throw new Error('the store answered CreateMultipartUpload without an UploadId');
        return r.UploadId;
      });
    const uploadId = await this.uploadId;
    const cmd = new sdk.UploadPartCommand({
      Bucket: this.o.bucket,
      Key: this.o.key,
      UploadId: uploadId,
      PartNumber: p.number,
      Body: p.data,
      ContentLength: p.data.length,
      // The store checks the part against it (BadDigest) and can report the COMPOSITE checksum (verify).
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: p.digest.toString('base64'),
    });
    usePayloadHash(cmd.middlewareStack, p.digest);
    const res = await this.o.client.send(cmd, { abortSignal: this.o.signal });
    if (!res.ETag) throw new Error(`the store answered part ${p.number} without an ETag`);
    this.done.push({ PartNumber: p.number, ETag: res.ETag, ...(res.ChecksumSHA256 ? { ChecksumSHA256: res.ChecksumSHA256 } : {}) });
  }

  /**
   * Aborts the multipart upload (if one was created) and throws `error`. An abort that fails is noted as
   * the error's cause; what it leaves is aborted before the next attempt (abortStale). When the daemon is
   * stopping, the abort is sent without waiting for it.
   */
  private async abortWith(error: unknown): Promise<never> {
    const id = await this.uploadId?.catch(() => undefined);
    if (id) {
      const abort = this.o.client.send(new (s3Sdk().AbortMultipartUploadCommand)({ Bucket: this.o.bucket, Key: this.o.key, UploadId: id }));
      if (this.o.signal?.aborted) abort.catch(() => {});
      else
        await abort.catch((e: unknown) => {
          if (error instanceof Error && error.cause === undefined) error.cause = e;
        });
    }
    throw error;
  }
}
