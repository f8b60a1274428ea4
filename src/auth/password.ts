// Password hashing with scrypt (node:crypto) at OWASP's recommended cost: N=2^17, r=8, p=1 (128 MiB, about
// 0.3 s per hash). The parameters travel inside the stored string, so raising them later only affects new
// hashes and old ones keep verifying. Format (PHC-like): `$scrypt$ln=17,r=8,p=1$<salt b64>$<hash b64>`.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptCost {
  /** log2 of N. */
  ln: number;
  r: number;
  p: number;
}

export const OWASP_COST: ScryptCost = { ln: 17, r: 8, p: 1 };
const KEY_LEN = 32;
const SALT_LEN = 16;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.ln;
  // scrypt needs 128 * N * r bytes; node's default maxmem (32 MiB) is below OWASP's cost, so raise it.
  const opts: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 128 * N * cost.r * 2 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A new salted hash of `password` to store in `users.password_hash`. Runs off the event loop. */
export async function hashPassword(password: string, cost: ScryptCost = OWASP_COST): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const key = await derive(password, salt, cost);
  return `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/**
 * True when `password` matches `stored`. The comparison is constant-time; a malformed stored value or
 * absurd parameters (a tampered row must not make us allocate gigabytes) simply fail.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const cost = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (cost.ln < 1 || cost.ln > 20 || cost.r < 1 || cost.r > 32 || cost.p < 1 || cost.p > 16) return false;
  const expected = Buffer.from(m[5], 'base64');
  if (expected.length !== KEY_LEN) return false;
  const actual = await derive(password, Buffer.from(m[4], 'base64'), cost);
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
/**
 * Burns the same time as a real verification, for logins naming no known user: the answer time must not
 * tell which usernames exist.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummy ??= hashPassword('not a real password');
  await verifyPassword(password, await dummy);
  return false;
}
