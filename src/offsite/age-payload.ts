// The age payload (age spec "Payload"): ChaCha20-Poly1305 STREAM in 64 KiB chunks, each chunk's nonce an
// 11-byte big-endian counter and a last-chunk flag byte, the key HKDF-SHA256(file key, 16-byte nonce,
// "payload"). Node's OpenSSL does the cipher (~1 GB/s here, the library's pure-JS one ~27 MB/s); the
// header and its stanzas stay the library's (age.ts). Decryption stays the library's: the unit test opens
// what this writes with it, the integration test with Debian's `age -d`.
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Transform } from 'node:stream';

export const CHUNK = 64 * 1024;

/** The payload's first 16 bytes (its nonce) and the STREAM key derived from it. */
export function payloadKey(fileKey: Uint8Array): { nonce: Buffer; key: Buffer } {
  const nonce = randomBytes(16);
  return { nonce, key: Buffer.from(hkdfSync('sha256', fileKey, nonce, 'payload', 32)) };
}

/**
 * A transform from plaintext to STREAM chunks. A full chunk is sealed only once a byte after it has come,
 * because the last chunk carries the flag and may itself be full; an empty final chunk is written only for
 * an empty plaintext (both as the spec says).
 */
export function streamEncrypter(key: Buffer): Transform {
  const buf = Buffer.allocUnsafe(CHUNK);
  let used = 0;
  let counter = 0;
  const seal = (last: boolean): Buffer => {
    const nonce = Buffer.alloc(12);
    nonce.writeUIntBE(counter++, 5, 6); // 48 bits of counter are 2^64 bytes, more than any archive
    if (last) nonce[11] = 1;
    const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    const out = Buffer.concat([c.update(buf.subarray(0, used)), c.final(), c.getAuthTag()]);
    used = 0;
    return out;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      let off = 0;
      while (off < chunk.length) {
        if (used === CHUNK) this.push(seal(false));
        const n = Math.min(CHUNK - used, chunk.length - off);
        chunk.copy(buf, used, off, off + n);
        used += n;
        off += n;
      }
      cb();
    },
    flush(cb) {
      cb(null, seal(true));
    },
  });
}
