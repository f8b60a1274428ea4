// Encryption of off-host copies in the age format (age-encryption.org/v1). Debian's `age -d` opens what we
// write (integration test). The split of the work:
// - the header (stanzas, MAC) is written and read by `age-encryption`, the reference JS implementation;
// - the payload (ChaCha20-Poly1305 STREAM) is node's native cipher both ways (age-payload.ts): the
//   library's pure-JS cipher ran at ~27 MB/s and was most of an upload's (and a restore's) time;
// - the scrypt stanza of a passphrase is ours (age spec "scrypt recipient stanza"): the library's scrypt is
//   synchronous JavaScript (~5 s of blocked event loop and 256 MiB of JS heap per file). Encryption
//   derives in a child process once per process (see headerFor), decryption with node's async scrypt.
import { chacha20poly1305Open, chacha20poly1305Seal } from './chacha.js';
import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';
import { pipeline, Readable } from 'node:stream';
import { payloadKey, sealFile, STREAM_HWM, streamDecrypter, streamKey } from './age-payload.js';
import { scryptInChild } from './scrypt-child.js';
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

/** scrypt(passphrase, salt) to 32 bytes, N = 2^logN, r = 8, p = 1 (age's parameters). */
type Scrypt = (passphrase: string, salt: Buffer, logN: number) => Promise<Buffer>;
const scryptHere: Scrypt = (pw, salt, logN) => scrypt(pw, salt, 32, { N: 2 ** logN, r: 8, p: 1, maxmem: 2 ** logN * 1024 + 2 ** 24 });
/** The stanza's wrapping key: scrypt of the label and the file's salt. */
const derive = (passphrase: string, salt: Uint8Array, logN: number, via: Scrypt = scryptHere) =>
  via(passphrase, Buffer.concat([Buffer.from(LABEL), salt]), logN);

export function scryptRecipient(passphrase: string, logN = SCRYPT_LOG_N, via: Scrypt = scryptHere): Recipient {
  return {
    async wrapFileKey(fileKey) {
      const salt = randomBytes(16);
      const key = await derive(passphrase, salt, logN, via);
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

/** An age header written by the library, and the file key its stanzas wrap (for our payload). */
export interface AgeHeader {
  header: Uint8Array;
  fileKey: Uint8Array;
}

/**
 * The library writes the header (stanzas, MAC): it encrypts an empty payload to a recipient that notes
 * the file key it is asked to wrap and hands the wrapping on. Encrypting nothing yields header, payload
 * nonce (16 bytes) and the empty final chunk's tag (16 bytes); the last 32 bytes are dropped, the payload
 * is ours (age-payload.ts, with its own nonce).
 */
async function libraryHeader(inner: Recipient): Promise<AgeHeader> {
  const { Encrypter } = await ageLib();
  let fileKey: Uint8Array | undefined;
  const e = new Encrypter();
  e.addRecipient({
    wrapFileKey(k) {
      fileKey = Uint8Array.from(k);
      return inner.wrapFileKey(k);
    },
  });
  const sealed = await e.encrypt(new Uint8Array(0));
  const header = sealed.subarray(0, sealed.length - 32);
  if (!fileKey || !Buffer.from(header.subarray(-80)).toString('latin1').includes('\n--- ')) throw new Error('age: unexpected header layout');
  return { header, fileKey };
}

/** The library's own recipient object for `age1...` (X25519, or the hybrid and tag kinds it knows). */
async function libraryRecipient(recipient: string): Promise<Recipient> {
  const e = new (await ageLib()).Encrypter();
  e.addRecipient(recipient); // validates the string; throws on an unknown kind
  // Not in the typings: the parsed recipient lives in the Encrypter's `recipients` field (typage 0.3).
  // Pinned by package-lock; test/unit/offsite/age.test.ts fails if a release moves it.
  const r = (e as unknown as { recipients?: Recipient[] }).recipients?.[0];
  if (!r || typeof r.wrapFileKey !== 'function') throw new Error('age: the library no longer exposes its recipient');
  return r;
}

// One scrypt per passphrase per process: the salt, the stanza and the file key it wraps are reused for
// every copy this process makes, each copy with a fresh 16-byte payload nonce (so its own payload key).
// A fresh salt with the same derived key would reuse the stanza's all-zero ChaCha20-Poly1305 nonce on a
// new file key (forbidden), so the whole header is what is reused. Opening any copy needs the passphrase
// either way; what two copies of one process share is only visible as an identical header.
let passphraseHeader: { passphrase: string; logN: number; header: Promise<AgeHeader> } | undefined;

export async function headerFor(key: AgeKey): Promise<AgeHeader> {
  if ('recipient' in key) return libraryHeader(await libraryRecipient(key.recipient));
  const logN = key.logN ?? SCRYPT_LOG_N;
  if (passphraseHeader?.passphrase !== key.passphrase || passphraseHeader.logN !== logN) {
    const header = libraryHeader(scryptRecipient(key.passphrase, logN, scryptInChild));
    passphraseHeader = { passphrase: key.passphrase, logN, header };
    header.catch(() => {
      if (passphraseHeader?.header === header) passphraseHeader = undefined; // a failed derivation is not kept
    });
  }
  return passphraseHeader.header;
}

/**
 * The age file of `file` handed to `write` piece by piece: the library's header and the payload nonce,
 * then our native STREAM payload (sealFile), never a copy of the file in memory or on disk.
 */
export async function encryptFileTo(file: string, key: AgeKey, write: (b: Uint8Array) => Promise<void>): Promise<void> {
  const { header, fileKey } = await headerFor(key);
  const p = payloadKey(fileKey);
  await write(header);
  await write(p.nonce);
  await sealFile(file, p.key, write);
}

/** Headers this long are refused (age's own are a few hundred bytes; post-quantum stanzas a few KiB). */
const MAX_HEADER = 256 * 1024;
const MAC_LINE = Buffer.from('\n--- ');

/**
 * The plaintext stream of an age file; rejects at once on a wrong key, errors mid-stream on tampering.
 * The library reads the header (stanzas, identities, MAC: `decryptHeader`), node's cipher the payload.
 */
export async function decryptStream(sealed: ReadableStream<Uint8Array>, secret: AgeSecret): Promise<ReadableStream<Uint8Array>> {
  const reader = sealed.getReader();
  let buf = Buffer.alloc(0);
  const more = async (what: string) => {
    const { done, value } = await reader.read();
    if (done) throw new Error(`age: the file ends in its ${what}`);
    buf = Buffer.concat([buf, value]);
  };
  try {
    // The header ends with its MAC line, `--- <base64>\n`: the only line that starts with `---`.
    let end = -1;
    for (let from = 0; end < 0; ) {
      const mac = buf.indexOf(MAC_LINE, from);
      const nl = mac < 0 ? -1 : buf.indexOf(0x0a, mac + MAC_LINE.length);
      if (nl >= 0) end = nl + 1;
      else {
        if (buf.length > MAX_HEADER) throw new Error('age: no header end within 256 KiB');
        from = mac >= 0 ? mac : Math.max(0, buf.length - MAC_LINE.length + 1);
        await more('header');
      }
    }
    const d = new (await ageLib()).Decrypter();
    d.addIdentity('identity' in secret ? secret.identity : scryptIdentity(secret.passphrase));
    const fileKey = await d.decryptHeader(buf.subarray(0, end));
    while (buf.length < end + 16) await more('payload nonce');
    const key = streamKey(fileKey, buf.subarray(end, end + 16));
    const first = buf.subarray(end + 16);
    const payload = Readable.from(
      (async function* () {
        try {
          if (first.length) yield first;
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            yield value;
          }
        } finally {
          await reader.cancel().catch(() => {}); // a consumer that stops early lets the source go too
        }
      })(),
      { objectMode: false, highWaterMark: STREAM_HWM },
    );
    return Readable.toWeb(pipeline(payload, streamDecrypter(key), () => {})) as ReadableStream<Uint8Array>;
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
}
