// The part pool and the part splitter of an off-host copy: parts cut exactly at the part size (the last
// the rest; a full last part is not followed by an empty one), copied into the pool's buffers, hashed whole
// and per part; the pool lends each buffer to one part at a time and is what bounds the parts in flight.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PartPool } from '../../../src/offsite/part-pool.js';
import { PartSplitter, type Part } from '../../../src/offsite/part-splitter.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest();
const bytes = (n: number, seed = 1) => Buffer.from(new Uint8Array(n).map((_, i) => (i * 31 + seed) % 256));

/** Splits `input` fed in pieces of `piece` bytes; a sink that gives each buffer back at once. */
async function split(input: Buffer, size: number, piece: number) {
  const pool = new PartPool(3, size);
  const parts: { number: number; data: Buffer; digest: Buffer; last: boolean }[] = [];
  const splitter = new PartSplitter(pool, (p) => {
    parts.push({ number: p.number, data: Buffer.from(p.data), digest: p.digest, last: p.last });
    pool.give(p.buffer);
  });
  for (let off = 0; off < input.length; off += piece) await splitter.write(input.subarray(off, off + piece));
  const out = await splitter.end();
  return { parts, out, pool };
}

describe('part pool', () => {
  it('lends count buffers of size from one allocation, then makes the next taker wait for a give', async () => {
    const pool = new PartPool(2, 16);
    const a = await pool.take();
    const b = await pool.take();
    expect([a.length, b.length]).toEqual([16, 16]);
    expect(a.buffer).toBe(b.buffer); // one slab
    let third: Buffer | undefined;
    const waiting = pool.take().then((x) => (third = x));
    await Promise.resolve();
    expect(third).toBeUndefined();
    expect(pool.inUse).toBe(2);
    pool.give(a);
    await waiting;
    expect(third).toBe(a);
    expect(pool.inUse).toBe(2);
    pool.give(b);
    pool.give(third!);
    expect(pool.inUse).toBe(0);
  });

  it('refuses a buffer given back twice or not its own', async () => {
    const pool = new PartPool(2, 8);
    const a = await pool.take();
    pool.give(a);
    expect(() => pool.give(a)).toThrow(/given back twice/);
    expect(() => pool.give(Buffer.alloc(8))).toThrow(/not from this pool/);
  });
});

describe('part splitter', () => {
  const SIZE = 64;
  for (const n of [0, 1, SIZE - 1, SIZE, SIZE + 1, 2 * SIZE, 2 * SIZE + 5, 7 * SIZE]) {
    for (const piece of [1, 7, SIZE, 3 * SIZE]) {
      it(`cuts ${n} bytes written ${piece} at a time into parts of ${SIZE}, hashed whole and per part`, async () => {
        const input = bytes(n);
        const { parts, out, pool } = await split(input, SIZE, piece);
        const want = Math.max(1, Math.ceil(n / SIZE));
        expect(parts.map((p) => p.number)).toEqual([...Array(want).keys()].map((i) => i + 1));
        expect(parts.map((p) => p.last)).toEqual([...Array(want).keys()].map((i) => i === want - 1));
        expect(Buffer.concat(parts.map((p) => p.data))).toEqual(input);
        for (const p of parts.slice(0, -1)) expect(p.data.length).toBe(SIZE);
        for (const p of parts) expect(p.digest).toEqual(sha(p.data));
        expect(out).toEqual({ sha256: sha(input).toString('hex'), size: n, partDigests: parts.map((p) => p.digest) });
        expect(pool.inUse).toBe(0);
      });
    }
  }

  it('waits for a buffer when every one is lent: the pool bounds the parts in flight', async () => {
    const pool = new PartPool(2, 4);
    const held: Part[] = [];
    const splitter = new PartSplitter(pool, (p) => void held.push(p)); // nothing settles until released
    await splitter.write(bytes(8)); // part 1 full (buffer 1), part 2 full (buffer 2), part 1 handed on
    expect(held.map((p) => p.number)).toEqual([1]);
    let wrote = false;
    const more = splitter.write(bytes(1)).then(() => (wrote = true)); // hands part 2 on, needs a third buffer
    await new Promise((r) => setTimeout(r, 5));
    expect(wrote).toBe(false);
    expect(held.map((p) => p.number)).toEqual([1, 2]);
    pool.give(held[0].buffer);
    await more;
    const out = await splitter.end();
    expect(held.map((p) => [p.number, p.data.length, p.last])).toEqual([[1, 4, false], [2, 4, false], [3, 1, true]]);
    expect(out.size).toBe(9);
  });

  it('stops the writer when the sink throws, and gives that part buffer back', async () => {
    const pool = new PartPool(2, 4);
    const splitter = new PartSplitter(pool, () => {
      throw new Error('the store refused');
    });
    await expect(splitter.write(bytes(9))).rejects.toThrow('the store refused');
    expect(pool.inUse).toBe(0); // the refused part's buffer is free again; no next one was taken
  });
});
