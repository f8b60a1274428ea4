// The age format both ways: what we encrypt opens with the library's own decrypter (its JS scrypt), and
// what it encrypts opens with ours (node's scrypt); a wrong passphrase fails before any byte; a flipped
// byte fails the stream. Debian's `age -d` is checked in test/integration/offsite.test.ts.
import { describe, expect, it } from 'vitest';
import { Decrypter, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { decryptStream, encryptStream } from '../../../src/offsite/age.js';

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
});
