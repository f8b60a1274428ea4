// The age format both ways: what we encrypt opens with the library's own decrypter (its JS scrypt), and
// what it encrypts opens with ours (node's scrypt); a wrong passphrase fails before any byte; a flipped
// byte fails the stream. Debian's `age -d` is checked in test/integration/offsite.test.ts.
import { describe, expect, it } from 'vitest';
import { Decrypter, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { decryptStream, encryptStream, headerFor } from '../../../src/offsite/age.js';
import { CHUNK } from '../../../src/offsite/age-payload.js';

const plain = new Uint8Array(70_000).map((_, i) => (i * 7) % 251);
const streamOf = (b: Uint8Array) => new Blob([b as Uint8Array<ArrayBuffer>]).stream() as ReadableStream<Uint8Array>;
const bytes = async (s: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(s).arrayBuffer());

describe('age encryption of off-host copies', () => {
  it('encrypts a stream with a passphrase that the reference decrypter opens', async () => {
    const sealed = await bytes(await encryptStream(streamOf(plain), { passphrase: 'pw one', logN: 10 }));
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
    const sealed = await bytes(await encryptStream(streamOf(plain), { recipient: await identityToRecipient(identity) }));
    expect(await bytes(await decryptStream(streamOf(sealed), { identity }))).toEqual(plain);
    sealed[sealed.length - 100] ^= 1;
    await expect(bytes(await decryptStream(streamOf(sealed), { identity }))).rejects.toThrow();
  });

  it('writes the payload natively at every chunk boundary the library opens (0, 1, a full chunk, a full chunk + 1, two full chunks)', async () => {
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 7]) {
      const p = new Uint8Array(n).map((_, i) => (i * 13) % 256);
      const sealed = await bytes(await encryptStream(streamOf(p), { recipient }));
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
    const a = await bytes(await encryptStream(streamOf(plain), key));
    const b = await bytes(await encryptStream(streamOf(plain), key));
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
});
