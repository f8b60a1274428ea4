// The age format both ways: what we encrypt opens with the library's own decrypter (its JS scrypt), and
// what it encrypts opens with ours (node's scrypt); a wrong passphrase fails before any byte; a flipped
// byte fails the stream. Debian's `age -d` is checked in test/integration/offsite.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decrypter, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decryptStream, encryptFileTo, headerFor, type AgeKey } from '../../../src/offsite/age.js';
import { CHUNK } from '../../../src/offsite/age-payload.js';

const plain = new Uint8Array(70_000).map((_, i) => (i * 7) % 251);
const streamOf = (b: Uint8Array) => new Blob([b as Uint8Array<ArrayBuffer>]).stream() as ReadableStream<Uint8Array>;
const bytes = async (s: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(s).arrayBuffer());

let tmp: string;
let files = 0;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'svc-age-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The age file of `plain` as an off-host copy writes it (encryptFileTo of a file). */
async function seal(plain: Uint8Array, key: AgeKey): Promise<Uint8Array> {
  const file = join(tmp, `plain-${++files}`);
  await writeFile(file, plain);
  const out: Buffer[] = [];
  await encryptFileTo(file, key, async (b) => {
    out.push(Buffer.from(b));
  });
  return new Uint8Array(Buffer.concat(out));
}

describe('age encryption of off-host copies', () => {
  it('encrypts with a passphrase what the reference decrypter opens', async () => {
    const sealed = await seal(plain, { passphrase: 'pw one', logN: 10 });
    expect(new TextDecoder().decode(sealed.subarray(0, 21))).toBe('age-encryption.org/v1');
    expect(new TextDecoder().decode(sealed.subarray(0, 200))).toContain('-> scrypt ');
    const d = new Decrypter();
    d.addPassphrase('pw one');
    expect(await d.decrypt(sealed)).toEqual(plain);
  });

  it('opens what the reference encrypter wrote, and refuses a wrong passphrase before any byte', async () => {
    const e = new Encrypter();
    e.setPassphrase('pw two');
    e.setScryptWorkFactor(10);
    const sealed = await e.encrypt(plain);
    expect(await bytes(await decryptStream(streamOf(sealed), { passphrase: 'pw two' }))).toEqual(plain);
    await expect(decryptStream(streamOf(sealed), { passphrase: 'nope' })).rejects.toThrow(/incorrect passphrase/);
  });

  it('encrypts to an age recipient, opened by its identity; a flipped byte fails the stream', async () => {
    const identity = await generateIdentity();
    const sealed = await seal(plain, { recipient: await identityToRecipient(identity) });
    expect(await bytes(await decryptStream(streamOf(sealed), { identity }))).toEqual(plain);
    sealed[sealed.length - 100] ^= 1;
    await expect(bytes(await decryptStream(streamOf(sealed), { identity }))).rejects.toThrow();
  });

  it('writes the payload natively at every chunk boundary the library opens (0, 1, a full chunk, a full chunk + 1, two full chunks)', async () => {
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 7]) {
      const p = new Uint8Array(n).map((_, i) => (i * 13) % 256);
      const sealed = await seal(p, { recipient });
      const d = new Decrypter();
      d.addIdentity(identity);
      expect(await d.decrypt(sealed), `${n} bytes`).toEqual(p);
      // header + 16-byte nonce + one 16-byte tag per chunk (an empty plaintext has one empty chunk)
      const chunks = Math.max(1, Math.ceil(n / CHUNK));
      expect(sealed.length - (await headerFor({ recipient })).header.length).toBe(16 + n + 16 * chunks);
    }
  });

  it('derives a passphrase once per process: copies share the header, each has its own payload nonce, each opens', async () => {
    const key = { passphrase: 'pw three', logN: 10 };
    const a = await seal(plain, key);
    const b = await seal(plain, key);
    const h = (await headerFor(key)).header.length;
    expect(a.subarray(0, h)).toEqual(b.subarray(0, h));
    expect(a.subarray(h, h + 16)).not.toEqual(b.subarray(h, h + 16));
    expect(a.subarray(h + 16)).not.toEqual(b.subarray(h + 16));
    for (const sealed of [a, b]) {
      const d = new Decrypter();
      d.addPassphrase('pw three');
      expect(await d.decrypt(sealed)).toEqual(plain);
    }
    // another passphrase (or work factor) is derived anew
    expect((await headerFor({ passphrase: 'pw four', logN: 10 })).header).not.toEqual((await headerFor(key)).header);
  });

  it('opens files the library wrote natively at every chunk boundary, fed in small odd pieces; a cut at a chunk boundary fails', async () => {
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    const pieces = (b: Uint8Array, n: number) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < b.length; i += n) c.enqueue(b.slice(i, i + n));
          c.close();
        },
      });
    for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 7]) {
      const p = new Uint8Array(n).map((_, i) => (i * 29) % 256);
      const e = new Encrypter();
      e.addRecipient(recipient);
      const sealed = await e.encrypt(p);
      expect(await bytes(await decryptStream(pieces(sealed, 1000), { identity })), `${n} bytes`).toEqual(p);
      expect(await bytes(await decryptStream(streamOf(sealed), { identity })), `${n} bytes whole`).toEqual(p);
    }
    // Two full chunks cut after the first: the first is not marked last, so the stream must fail.
    const e = new Encrypter();
    e.addRecipient(recipient);
    const sealed = await e.encrypt(new Uint8Array(2 * CHUNK + 7));
    const header = (await seal(new Uint8Array(0), { recipient })).length - 32;
    const cut = sealed.subarray(0, header + 16 + CHUNK + 16);
    await expect(bytes(await decryptStream(streamOf(cut), { identity }))).rejects.toThrow();
    await expect(decryptStream(streamOf(sealed.subarray(0, 30)), { identity })).rejects.toThrow(/ends in its header/);
  });

  it('encrypts a file piece by piece (an off-host copy) at every chunk and read boundary, opened by the library', async () => {
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    const dir = await mkdtemp(join(tmpdir(), 'svc-age-file-'));
    try {
      const READ = 16 * CHUNK; // the reads of sealFile
      for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, READ - 1, READ, READ + 1, 2 * READ, 2 * READ + CHUNK + 3]) {
        const p = new Uint8Array(n).map((_, i) => (i * 17 + 3) % 256);
        const file = join(dir, `plain-${n}`);
        await writeFile(file, p);
        const out: Buffer[] = [];
        // A writer that waits now and then, as one waiting for a free part buffer does.
        await encryptFileTo(file, { recipient }, async (b) => {
          out.push(Buffer.from(b));
          if (out.length % 5 === 0) await new Promise((r) => setImmediate(r));
        });
        const sealed = Buffer.concat(out);
        const d = new Decrypter();
        d.addIdentity(identity);
        // Buffer.equals: a deep toEqual of megabytes takes seconds
        expect(Buffer.from(await d.decrypt(sealed)).equals(p), `${n} bytes`).toBe(true);
        const chunks = Math.max(1, Math.ceil(n / CHUNK));
        expect(sealed.length - (await headerFor({ recipient })).header.length, `${n} bytes`).toBe(16 + n + 16 * chunks);
      }
      // A writer that fails stops the encryption with its error (and leaves no read unhandled).
      const big = join(dir, 'big');
      await writeFile(big, new Uint8Array(3 * READ));
      let calls = 0;
      await expect(
        encryptFileTo(big, { recipient }, async () => {
          if (++calls === 10) throw new Error('the store went away');
        }),
      ).rejects.toThrow('the store went away');
      await expect(encryptFileTo(join(dir, 'missing'), { recipient }, async () => {})).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
