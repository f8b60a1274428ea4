// AES-256-GCM sealing for everything secret at rest (service credentials, secret env values, deploy env
// snapshots). A sealed value is `v1.<nonce>.<tag>.<ciphertext>` in base64url: a random 96-bit nonce per
// value, and the tag makes any tampering or a wrong key fail loudly instead of yielding garbage.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, createHash, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';

export class DecryptError extends Error {}

export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
  sealJson(value: unknown): string;
  openJson<T>(sealed: string): T;
}

export function createSealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  const seal = (plaintext: string): string => {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, nonce.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
  };
  const open = (sealed: string): string => {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new DecryptError('not a sealed value');
    const [, nonce, tag, ct] = parts;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new DecryptError('cannot decrypt: wrong SVC_ENCRYPTION_KEY or tampered value');
    }
  };
  return {
    seal,
    open,
    sealJson: (value) => seal(JSON.stringify(value)),
    openJson: <T>(sealed: string) => JSON.parse(open(sealed)) as T,
  };
}

/** SHA-256 hex digest, used to store session and API tokens without keeping the token itself. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** URL-safe random token (base64url of `bytes` random bytes). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * A key of its own for one purpose, derived from svc's sealing key (HMAC-SHA256 over a constant naming the
 * purpose): nothing to store, the same after a restart, and knowing it reveals nothing of the sealing key.
 */
export function deriveKey(key: Buffer, purpose: string): Buffer {
  return createHmac('sha256', key).update(`svc derived key: ${purpose}`).digest();
}
