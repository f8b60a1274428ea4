import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { demuxToFile, STDERR_TAIL_BYTES } from '../../../src/runtime/docker-demux.js';
import { waitFor } from '../../support/wait.js';

const frame = (type: 1 | 2, payload: string | Buffer) => {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = Buffer.alloc(8);
  head[0] = type;
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
};

/** A writable that takes `delayMs` per chunk with a tiny buffer, so backpressure really happens. */
function slowSink(delayMs: number) {
  const got: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _enc, done) {
      got.push(chunk);
      setTimeout(done, delayMs);
    },
  });
  /** Everything written, once the sink has flushed (as the runtime ends and closes its file). */
  const text = async () => {
    sink.end();
    await once(sink, 'finish');
    return Buffer.concat(got).toString();
  };
  return { sink, text };
}

/** A writable that holds every write until `release()`: a file that is (for now) infinitely slow. */
function gatedSink() {
  const got: Buffer[] = [];
  const held: (() => void)[] = [];
  let open = false;
  const sink = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _enc, done) {
      got.push(chunk);
      if (open) done();
      else held.push(done);
    },
  });
  return {
    sink,
    release() {
      open = true;
      held.splice(0).forEach((done) => done());
    },
    async text() {
      sink.end();
      await once(sink, 'finish');
      return Buffer.concat(got).toString();
    },
  };
}

describe('demuxToFile', () => {
  it('writes stdout frames split anywhere across chunks, in order, and returns stderr', async () => {
    const whole = Buffer.concat([frame(1, 'hello '), frame(2, 'warn: x\n'), frame(1, 'wörld'), frame(1, ''), frame(2, 'err\n'), frame(1, '!\n')]);
    const chunks: Buffer[] = [];
    for (let i = 0; i < whole.length; i += 3) chunks.push(whole.subarray(i, i + 3)); // every header split too
    const out = slowSink(0);
    const stderr = await demuxToFile(Readable.from(chunks), out.sink);
    expect(await out.text()).toBe('hello wörld!\n');
    expect(stderr).toBe('warn: x\nerr\n');
  });

  it('keeps only the last 64 KiB of stderr', async () => {
    const noisy = [frame(2, 'a'.repeat(STDERR_TAIL_BYTES)), frame(2, 'the real error\n')];
    const stderr = await demuxToFile(Readable.from(noisy), slowSink(0).sink);
    expect(stderr.length).toBe(STDERR_TAIL_BYTES);
    expect(stderr.endsWith('the real error\n')).toBe(true);
  });

  it('waits for a slow file instead of buffering the stream', async () => {
    const frames = Array.from({ length: 50 }, (_, i) => frame(1, `line ${i}\n`));
    let pulled = 0;
    const source = Readable.from(
      (function* () {
        for (const f of frames) {
          pulled++;
          yield f;
        }
      })(),
    );
    const out = gatedSink();
    const done = demuxToFile(source, out.sink);
    // The file holds its first write: the demux must wait for 'drain', and the source fills only its own
    // read-ahead buffer. Had the stream been buffered, every frame would have been pulled by then.
    await waitFor(() => out.sink.writableNeedDrain && (source.readableLength >= source.readableHighWaterMark || pulled === frames.length));
    expect(pulled).toBeLessThan(frames.length); // the source is paused while the sink drains
    out.release();
    await done;
    expect(await out.text()).toBe(frames.map((_, i) => `line ${i}\n`).join(''));
  });
});
