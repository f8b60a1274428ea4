// The engine's multiplexed exec/attach stream (8-byte frame headers: stream type, 3 zero bytes, payload
// length) split into stdout written to a file and stderr kept as a bounded tail. Ours rather than
// docker-modem's demuxStream, which pushes every frame into a sink with no backpressure: a dump of a few
// hundred MB piled up in memory and was then joined and decoded in one go, blocking the event loop for
// hundreds of ms. Here the source is read with for-await, so it pauses while the file catches up.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';

/** How much of stderr is kept (its end: where the error is). */
export const STDERR_TAIL_BYTES = 64 * 1024;

const HEADER = 8;

/** Copies the stdout frames of `source` into `stdout` (awaiting drain) and returns stderr's tail. */
export async function demuxToFile(source: AsyncIterable<Buffer> & Readable, stdout: Writable): Promise<string> {
  let pending: Buffer = Buffer.alloc(0);
  let stderr: Buffer = Buffer.alloc(0);
  const write = async (b: Buffer) => {
    if (!stdout.write(b)) await once(stdout, 'drain'); // rejects if the file errors meanwhile
  };
  for await (const chunk of source) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    while (pending.length - at >= HEADER) {
      const type = pending[at]!;
      const size = pending.readUInt32BE(at + 4);
      if (pending.length - at - HEADER < size) break;
      const payload = pending.subarray(at + HEADER, at + HEADER + size);
      if (type === 2) stderr = tail(Buffer.concat([stderr, payload]));
      else await write(payload); // 1 = stdout (0 = stdin never comes back)
      at += HEADER + size;
    }
    pending = pending.subarray(at);
  }
  return stderr.toString('utf8');
}

const tail = (b: Buffer): Buffer => (b.length > STDERR_TAIL_BYTES ? b.subarray(b.length - STDERR_TAIL_BYTES) : b);
