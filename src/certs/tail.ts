// Follows a log file another process appends to (Caddy's TLS log): each `read()` returns the complete
// lines added since the last one. A file that got shorter or was replaced (Caddy rolls it at 1 MiB) is
// read again from its start; a torn last line waits for its end. Bounded: at most MAX_READ bytes a call.
import { open, stat } from 'node:fs/promises';

const MAX_READ = 1024 * 1024;

export function fileTail(path: string): { read(): Promise<string[]> } {
  let offset = 0;
  let ino: number | undefined;
  let rest = '';
  return {
    async read() {
      const s = await stat(path).catch(() => undefined);
      if (!s) return [];
      if (s.ino !== ino || s.size < offset) {
        ino = s.ino;
        offset = 0;
        rest = '';
      }
      if (s.size === offset) return [];
      const fh = await open(path, 'r');
      try {
        const len = Math.min(s.size - offset, MAX_READ);
        const buf = Buffer.alloc(len);
        const { bytesRead } = await fh.read(buf, 0, len, offset);
        offset += bytesRead;
        const lines = (rest + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        if (rest.length > MAX_READ) rest = ''; // a line that never ends is not a log line
        return lines.filter((l) => l.trim() !== '');
      } finally {
        await fh.close();
      }
    },
  };
}
