// The checksum a store reports, predicted from what was sent: one part is the object's SHA-256, several
// are S3's COMPOSITE form (SHA-256 of the parts' digests, `-N`), cut where lib-storage cuts (PART_SIZE).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectedStoreChecksum, PART_SIZE } from '../../../src/offsite/upload.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest();

describe('expected store checksum', () => {
  it('is the base64 SHA-256 of a single part and the composite of several', () => {
    const one = Buffer.alloc(100, 1);
    expect(expectedStoreChecksum({ sha256: sha(one).toString('hex'), size: 100, partDigests: [sha(one)] })).toBe(sha(one).toString('base64'));
    const parts = [Buffer.alloc(PART_SIZE, 2), Buffer.alloc(10, 3)];
    const whole = Buffer.concat(parts);
    const got = expectedStoreChecksum({ sha256: sha(whole).toString('hex'), size: whole.length, partDigests: parts.map(sha) });
    expect(got).toBe(`${sha(Buffer.concat(parts.map(sha))).toString('base64')}-2`);
  });
});
