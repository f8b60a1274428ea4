import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openKernelFile, readKernelFile } from '../../../src/runtime/kernel-file.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('readKernelFile', () => {
  it('reads a /proc file (stat size 0) as readFileSync does', () => {
    // Files that do not change between the two reads (net/dev did: a packet counted in between failed CI).
    for (const f of ['/proc/self/cmdline', '/proc/version']) expect(readKernelFile(f), f).toBe(readFileSync(f, 'latin1'));
  });

  it('reads a file larger than its buffer whole, and a small one after it without leftovers', () => {
    dir = mkdtempSync(join(tmpdir(), 'kernel-file-'));
    const big = join(dir, 'big');
    const small = join(dir, 'small');
    writeFileSync(big, 'x'.repeat(40_000) + 'end');
    writeFileSync(small, 'usage_usec 42\n');
    expect(readKernelFile(big)).toBe('x'.repeat(40_000) + 'end');
    expect(readKernelFile(small)).toBe('usage_usec 42\n');
    writeFileSync(small, '');
    expect(readKernelFile(small)).toBe('');
  });

  it('throws for a file that is gone (the container stopped)', () => {
    expect(() => readKernelFile('/proc/self/no-such-file')).toThrow();
  });
});

describe('openKernelFile', () => {
  it('reads a pseudo-file again from offset 0: the kernel\'s text of now, not the first one', () => {
    const io = openKernelFile('/proc/self/io'); // rchar counts every read, this one's included
    try {
      const rchar = () => Number(/rchar: (\d+)/.exec(io.read())?.[1]);
      const first = rchar();
      readFileSync('/proc/self/net/dev');
      expect(rchar()).toBeGreaterThan(first);
    } finally {
      io.close();
    }
  });

  it('reads a file rewritten in place whole each time, and throws once closed', () => {
    dir = mkdtempSync(join(tmpdir(), 'kernel-file-'));
    const path = join(dir, 'memory.current');
    writeFileSync(path, '123456789\n');
    const f = openKernelFile(path);
    expect(f.read()).toBe('123456789\n');
    writeFileSync(path, '42\n');
    expect(f.read()).toBe('42\n');
    writeFileSync(path, 'y'.repeat(20_000));
    expect(f.read()).toBe('y'.repeat(20_000));
    f.close();
    expect(() => f.read()).toThrow();
  });
});
