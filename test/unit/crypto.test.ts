import { describe, it, expect } from 'vitest';
import { createSealer, DecryptError, safeEqual, sha256Hex } from '../../src/crypto.js';

describe('crypto', () => {
  const sealer = createSealer(Buffer.alloc(32, 1));

  it('round-trips text and JSON', () => {
    expect(sealer.open(sealer.seal('hunter2'))).toBe('hunter2');
    expect(sealer.openJson(sealer.sealJson({ a: 1, b: ['x'] }))).toEqual({ a: 1, b: ['x'] });
  });

  it('uses a fresh nonce per value', () => {
    expect(sealer.seal('same')).not.toBe(sealer.seal('same'));
  });

  it('detects tampering and a wrong key', () => {
    const sealed = sealer.seal('secret value');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] ^= 1;
    parts[3] = ct.toString('base64url');
    expect(() => sealer.open(parts.join('.'))).toThrow(DecryptError);
    expect(() => createSealer(Buffer.alloc(32, 2)).open(sealed)).toThrow(DecryptError);
    expect(() => sealer.open('garbage')).toThrow(DecryptError);
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => createSealer(Buffer.alloc(16))).toThrow();
  });

  it('compares in constant time and hashes stably', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(sha256Hex('x')).toHaveLength(64);
  });
});
