// Reads a small kernel pseudo-file (cgroup, /proc) into one buffer reused by every call. readFileSync
// sizes its buffer from the file's stat, which is 0 for /proc files: it then takes a fresh 64 KiB buffer
// per read (50 of /proc/<pid>/net/dev every 10 s, off V8's heap, in malloc's arena) and 4 KiB for each
// cgroup file; a metrics round made about 3.5 MB of such garbage. Synchronous, so no two calls share the
// buffer at once; a file larger than it is read whole the ordinary way.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

const buffer = Buffer.allocUnsafe(16 * 1024);

export function readKernelFile(path: string): string {
  const fd = openSync(path, 'r');
  let size = 0;
  try {
    for (;;) {
      const n = readSync(fd, buffer, size, buffer.length - size, null);
      if (n === 0) break;
      size += n;
      if (size === buffer.length) return readFileSync(path, 'latin1');
    }
  } finally {
    closeSync(fd);
  }
  return buffer.toString('latin1', 0, size);
}
