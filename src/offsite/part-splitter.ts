// Cuts a byte stream into upload parts of exactly `partSize` bytes (the last one the rest), copying the
// bytes straight into part buffers of a PartPool, and hashes them on the way: SHA-256 of the whole and of
// each part (the part's x-amz-checksum-sha256 and SigV4 payload hash, and the store's COMPOSITE checksum).
// A full part is handed on only once a byte after it has come or at the end, so the first part is known
// to be the only one (one PutObject) or not (a multipart upload).
import { createHash, type Hash } from 'node:crypto';
import type { PartPool } from './part-pool.js';

export interface Part {
  /** 1-based, as S3 numbers parts. */
  number: number;
  /** The part's bytes: a view of `buffer`. */
  data: Buffer;
  /** The pool buffer to give back once the part's upload has settled. */
  buffer: Buffer;
  digest: Buffer;
  /** No part follows. */
  last: boolean;
}

export interface Split {
  sha256: string;
  size: number;
  partDigests: Buffer[];
}

export class PartSplitter {
  private readonly whole = createHash('sha256');
  private part: Hash = createHash('sha256');
  private buffer: Buffer | undefined;
  private filled = 0;
  private number = 1;
  private size = 0;
  private readonly digests: Buffer[] = [];
  private ended = false;

  /** `emit` starts a part's upload (and gives its buffer back when it settles), or throws to stop the writer. */
  constructor(
    private readonly pool: PartPool,
    private readonly emit: (p: Part) => void,
  ) {}

  /** Copies `bytes` into parts; waits only when a new part needs a buffer and none is free. */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.ended) throw new Error('write after end');
    for (let off = 0; off < bytes.length; ) {
      if (!this.buffer) this.buffer = await this.pool.take();
      else if (this.filled === this.pool.size) {
        this.handOn(false);
        this.buffer = await this.pool.take();
      }
      const n = Math.min(this.pool.size - this.filled, bytes.length - off);
      const piece = n === bytes.length ? bytes : bytes.subarray(off, off + n);
      this.whole.update(piece);
      this.part.update(piece);
      this.buffer.set(piece, this.filled);
      this.filled += n;
      this.size += n;
      off += n;
    }
  }

  /** Hands on the last part (an empty stream is one empty part) and returns what was written. */
  async end(): Promise<Split> {
    if (this.ended) throw new Error('ended twice');
    this.buffer ??= await this.pool.take();
    this.ended = true;
    this.handOn(true);
    return { sha256: this.whole.digest('hex'), size: this.size, partDigests: this.digests };
  }

  private handOn(last: boolean): void {
    const buffer = this.buffer!;
    const digest = this.part.digest();
    this.digests.push(digest);
    const p: Part = { number: this.number++, data: buffer.subarray(0, this.filled), buffer, digest, last };
    this.buffer = undefined;
    this.filled = 0;
    this.part = createHash('sha256');
    try {
      this.emit(p);
    } catch (e) {
      this.pool.give(buffer); // not sent: the buffer is free again
      throw e;
    }
  }
}
