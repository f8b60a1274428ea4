// The age payload (age spec "Payload"): ChaCha20-Poly1305 STREAM in 64 KiB chunks, each chunk's nonce an
// 11-byte big-endian counter and a last-chunk flag byte, the key HKDF-SHA256(file key, 16-byte nonce,
// "payload"). Node's OpenSSL does the cipher both ways (~1 GB/s here, the library's pure-JS one ~27 MB/s);
// the header and its stanzas stay the library's (age.ts). The unit test opens what this writes with the
// library and this opens what the library writes; the integration test opens ours with Debian's `age -d`.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';

export const CHUNK = 64 * 1024;
const TAG = 16;
/** Stream buffers of the payload transforms: a read of the archive (1 MiB) passes as one chunk. */
export const STREAM_HWM = 1024 * 1024;

/** The STREAM key of a payload from its first 16 bytes (its nonce). */
export const streamKey = (fileKey: Uint8Array, nonce: Uint8Array): Buffer => Buffer.from(hkdfSync('sha256', fileKey, nonce, 'payload', 32));

/** The payload's first 16 bytes (its nonce) and the STREAM key derived from it. */
export function payloadKey(fileKey: Uint8Array): { nonce: Buffer; key: Buffer } {
  const nonce = randomBytes(16);
  return { nonce, key: streamKey(fileKey, nonce) };
}

function chunkNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUIntBE(counter, 5, 6); // 48 bits of counter are 2^64 bytes, more than any archive
  if (last) nonce[11] = 1;
  return nonce;
}

/** Reads of an archive being sealed: a whole number of chunks (1 MiB). */
const READ = 16 * CHUNK;

/**
 * The STREAM payload of a file, handed to `write` piece by piece (each chunk's ciphertext, then its tag):
 * for an off-host copy that copies them straight into its part buffers (part-splitter.ts), so the payload
 * makes no buffer of its own but the cipher's output. Two read buffers are reused, one read ahead while
 * the other is sealed; the read ahead also tells whether a chunk is the last (flagged, as the spec says:
 * the last chunk may be full; an empty one only for an empty file). `write` may wait (a full pool).
 */
export async function sealFile(file: string, key: Buffer, write: (b: Uint8Array) => Promise<void>): Promise<void> {
  const fh = await open(file, 'r');
  const reads = [Buffer.allocUnsafe(READ), Buffer.allocUnsafe(READ)];
  /** Fills `b` up to its end or the file's: a short result is the end of the file. */
  const fill = async (b: Buffer): Promise<Buffer> => {
    let n = 0;
    while (n < b.length) {
      const { bytesRead } = await fh.read(b, n, b.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return b.subarray(0, n);
  };
  let counter = 0;
  const seal = async (plain: Buffer, last: boolean) => {
    const c = createCipheriv('chacha20-poly1305', key, chunkNonce(counter++, last), { authTagLength: TAG });
    const body = c.update(plain);
    const rest = c.final(); // empty for a stream cipher
    if (body.length) await write(body);
    if (rest.length) await write(rest);
    await write(c.getAuthTag());
  };
  let ahead: Promise<Buffer> | undefined;
  try {
    let cur = await fill(reads[0]);
    for (let i = 1; ; i++) {
      ahead = fill(reads[i % 2]);
      ahead.catch(() => {}); // awaited below; a write that fails first must not leave it unhandled
      const lastAt = Math.max(0, Math.ceil(cur.length / CHUNK) - 1) * CHUNK;
      for (let off = 0; off < lastAt; off += CHUNK) await seal(cur.subarray(off, off + CHUNK), false);
      const next = await ahead;
      await seal(cur.subarray(lastAt), next.length === 0);
      if (next.length === 0) return;
      cur = next;
    }
  } finally {
    await ahead?.catch(() => {}); // no read into a buffer of a closed file
    await fh.close();
  }
}

/**
 * A transform from STREAM chunks (the payload after its 16-byte nonce) to plaintext. A chunk is opened
 * only once a byte after it has come, to know whether it is the last; a missing or misplaced last chunk,
 * a truncated stream or a tag that does not match errors the stream (no plaintext of a bad chunk passes).
 */
export function streamDecrypter(key: Buffer): Transform {
  const SEALED = CHUNK + TAG;
  const held = Buffer.allocUnsafe(SEALED);
  let heldLen = 0;
  let counter = 0;
  const open = (sealed: Buffer, last: boolean): Buffer => {
    if (sealed.length < TAG || (!last && sealed.length !== SEALED)) throw new Error('age: truncated or malformed payload chunk');
    if (last && sealed.length === TAG && counter > 0) throw new Error('age: empty last chunk after a full one');
    const d = createDecipheriv('chacha20-poly1305', key, chunkNonce(counter++, last), { authTagLength: TAG });
    d.setAuthTag(sealed.subarray(sealed.length - TAG));
    const a = d.update(sealed.subarray(0, sealed.length - TAG));
    const b = d.final(); // throws when the tag does not match
    return b.length ? Buffer.concat([a, b]) : a;
  };
  return new Transform({
    highWaterMark: STREAM_HWM,
    transform(chunk: Buffer, _enc, cb) {
      try {
        const parts: Buffer[] = [];
        let off = 0;
        while (off < chunk.length) {
          if (heldLen === SEALED) {
            parts.push(open(held, false));
            heldLen = 0;
          }
          // Whole sealed chunks straight from the input, keeping at least one byte back.
          while (heldLen === 0 && chunk.length - off > SEALED) {
            parts.push(open(chunk.subarray(off, off + SEALED), false));
            off += SEALED;
          }
          const n = Math.min(SEALED - heldLen, chunk.length - off);
          chunk.copy(held, heldLen, off, off + n);
          heldLen += n;
          off += n;
        }
        cb(null, parts.length === 1 ? parts[0] : parts.length ? Buffer.concat(parts) : undefined);
      } catch (e) {
        cb(e as Error);
      }
    },
    flush(cb) {
      try {
        cb(null, open(held.subarray(0, heldLen), true));
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}
