import { openDb, type Db } from '../../src/store/db.js';
import { createSealer } from '../../src/crypto.js';
import type { Key } from '../../src/controller/types.js';

/** A fresh `:memory:` database with the real migrations. */
export const memoryDb = (): Db => openDb(':memory:');

export const testKey = Buffer.alloc(32, 7);
export const testSealer = () => createSealer(testKey);

/** An enqueue that records the keys it was given, for asserting that writes announce themselves. */
export function recordingEnqueue() {
  const keys: Key[] = [];
  const fn = (key: Key) => void keys.push(key);
  return Object.assign(fn, { keys });
}
