// ChaCha20-Poly1305 (RFC 8439) of one small value with an all-zero nonce, as the age scrypt stanza wraps
// its file key: node's OpenSSL does the cipher. The key is used once (fresh salt per file).
import { createCipheriv, createDecipheriv } from 'node:crypto';

const NONCE = Buffer.alloc(12);

export function chacha20poly1305Seal(key: Uint8Array, plaintext: Uint8Array): Uint8Array {
  const c = createCipheriv('chacha20-poly1305', key, NONCE, { authTagLength: 16 });
  return Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
}

/** The plaintext, or undefined when the tag does not match (wrong key or tampered body). */
export function chacha20poly1305Open(key: Uint8Array, sealed: Uint8Array): Uint8Array | undefined {
  if (sealed.length < 16) return undefined;
  const body = Buffer.from(sealed);
  try {
    const d = createDecipheriv('chacha20-poly1305', key, NONCE, { authTagLength: 16 });
    d.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]);
  } catch {
    return undefined;
  }
}
