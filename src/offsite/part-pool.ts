// The part buffers of one off-host copy: `count` buffers of `size` bytes cut from ONE allocation, each
// lent to one part at a time and given back once its upload has settled. The copy's memory is this slab
// (QUEUE + 1 parts: QUEUE in flight, one being filled) and nothing per part, and the pool is also what
// bounds the parts in flight: a part waits for a buffer, so never more than count - 1 are sent at once.
// One slab above glibc's largest mmap threshold (32 MiB) is its own mapping, returned to the OS whole when
// the copy is garbage; many part-sized buffers would instead grow and fragment the allocator's arenas.

export class PartPool {
  private readonly free: Buffer[] = [];
  private readonly waiting: ((b: Buffer) => void)[] = [];
  private readonly lent = new Set<Buffer>();

  constructor(
    readonly count: number,
    readonly size: number,
  ) {
    if (count < 2 || size < 1) throw new Error('a part pool needs at least two buffers of at least one byte');
    const slab = Buffer.allocUnsafeSlow(count * size);
    for (let i = 0; i < count; i++) this.free.push(slab.subarray(i * size, (i + 1) * size));
  }

  /** A free buffer, at once or once one is given back (first come, first served). */
  take(): Promise<Buffer> {
    const b = this.free.pop();
    if (b) {
      this.lent.add(b);
      return Promise.resolve(b);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Gives a buffer back (its bytes are overwritten by the next part). A buffer not lent is refused. */
  give(b: Buffer): void {
    if (!this.lent.has(b)) throw new Error('a part buffer given back twice or not from this pool');
    const next = this.waiting.shift();
    if (next) next(b); // stays lent, to the next part
    else {
      this.lent.delete(b);
      this.free.push(b);
    }
  }

  /** Buffers lent out now (parts being filled or sent). */
  get inUse(): number {
    return this.lent.size;
  }
}
