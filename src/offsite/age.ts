// Encryption of off-host copies in the age format (age-encryption.org/v1), with `age-encryption`, the
// reference JS implementation: its STREAM payload is encrypted chunk by chunk, so a backup of any size goes
// out through a fixed amount of memory. Debian's `age -d` opens what we write (integration test).
//
// One part is ours: the scrypt stanza of a passphrase. The library derives it with a synchronous
// JavaScript scrypt (work factor 2^18: ~5 s of the event loop and 256 MiB of JS heap per file); here it is
// node's native, asynchronous crypto.scrypt and ChaCha20-Poly1305 in the same format (age spec "scrypt
// recipient stanza"), so an upload never stalls the daemon. Decryption gets the same treatment.
import { chacha20poly1305Open, chacha20poly1305Seal } from './chacha.js';
import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';
import type { Identity, Recipient } from 'age-encryption';

// Loaded at first use (~16 MiB an install without off-host copies never needs); every use is async.
const ageLib = () => import('age-encryption');

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, o: object) => Promise<Buffer>;
const LABEL = 'age-encryption.org/v1/scrypt';
/** age's default work factor; the most we accept when decrypting (age itself caps at 22). */
export const SCRYPT_LOG_N = 18;
const MAX_LOG_N = 22;
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64').replace(/=+$/, '');

/** What uploads are encrypted for: a passphrase (scrypt) or an age recipient (`age1...`). */
export type AgeKey = { passphrase: string; logN?: number } | { recipient: string };
/** What opens a copy: the passphrase, or an identity (`AGE-SECRET-KEY-1...`). */
export type AgeSecret = { passphrase: string } | { identity: string };

const derive = (passphrase: string, salt: Uint8Array, logN: number) =>
  scrypt(passphrase, Buffer.concat([Buffer.from(LABEL), salt]), 32, { N: 2 ** logN, r: 8, p: 1, maxmem: 2 ** logN * 1024 + 2 ** 24 });

export function scryptRecipient(passphrase: string, logN = SCRYPT_LOG_N): Recipient {
  return {
    async wrapFileKey(fileKey) {
      const salt = randomBytes(16);
      const key = await derive(passphrase, salt, logN);
      const { Stanza } = await ageLib();
      return [new Stanza(['scrypt', b64(salt), String(logN)], chacha20poly1305Seal(key, fileKey))];
    },
  };
}

export function scryptIdentity(passphrase: string): Identity {
  return {
    async unwrapFileKey(stanzas) {
      const s = stanzas.find((x) => x.args[0] === 'scrypt');
      if (!s) return null;
      if (stanzas.length !== 1) throw new Error('age: a scrypt stanza must be the only one of its file');
      const logN = Number(s.args[2]);
      if (s.args.length !== 3 || !/^[1-9][0-9]?$/.test(s.args[2]) || logN > MAX_LOG_N) throw new Error('age: invalid or too costly scrypt stanza');
      const key = await derive(passphrase, Buffer.from(s.args[1], 'base64'), logN);
      const fileKey = chacha20poly1305Open(key, s.body);
      if (!fileKey) throw new Error('incorrect passphrase (age could not open the file key)');
      return fileKey;
    },
  };
}

/** The encrypted stream of `plain` (the age header first, then the payload as `plain` is read). */
export async function encryptStream(plain: ReadableStream<Uint8Array>, key: AgeKey): Promise<ReadableStream<Uint8Array>> {
  const e = new (await ageLib()).Encrypter();
  e.addRecipient('recipient' in key ? key.recipient : scryptRecipient(key.passphrase, key.logN));
  return e.encrypt(plain);
}

/** The plaintext stream of an age file; rejects at once on a wrong key, errors mid-stream on tampering. */
export async function decryptStream(sealed: ReadableStream<Uint8Array>, secret: AgeSecret): Promise<ReadableStream<Uint8Array>> {
  const d = new (await ageLib()).Decrypter();
  d.addIdentity('identity' in secret ? secret.identity : scryptIdentity(secret.passphrase));
  return d.decrypt(sealed);
}
