import { Readable } from 'node:stream';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { demuxLines, followProgress, LineSplitter, parseLogLine } from '../../../src/runtime/docker-streams.js';
import type { LogLine } from '../../../src/runtime/runtime.js';

/** One frame of the engine's multiplexed stream: 8-byte header (type, 0,0,0, big-endian length) + payload. */
const frame = (type: 1 | 2, text: string) => {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

const modem = new Docker({ socketPath: '/nonexistent' }).modem;

async function all(it: AsyncIterable<LogLine>) {
  const out: string[] = [];
  for await (const l of it) out.push(`${l.stream} ${l.time} ${l.line}`);
  return out;
}

describe('LineSplitter', () => {
  it('joins partial lines across chunks and strips CR', () => {
    const s = new LineSplitter();
    expect(s.push('a\nb')).toEqual(['a']);
    expect(s.push('c\r\nd')).toEqual(['bc']);
    expect(s.flush()).toEqual(['d']);
    expect(s.flush()).toEqual([]);
  });
});

describe('parseLogLine', () => {
  it.each([
    ['2024-05-01T10:00:00.123456789Z hello world', { time: '2024-05-01T10:00:00.123456789Z', line: 'hello world' }],
    ['no timestamp here', { time: '', line: 'no timestamp here' }],
  ])('%s', (raw, expected) => {
    expect(parseLogLine('stdout', raw)).toEqual({ stream: 'stdout', ...expected });
  });
});

describe('demuxLines', () => {
  it('demultiplexes frames into lines, across frame and chunk boundaries', async () => {
    const T = '2024-05-01T10:00:00Z';
    const bytes = Buffer.concat([frame(1, `${T} one\n${T} tw`), frame(2, `${T} oops\n`), frame(1, `o\n${T} three`), frame(1, ' é\n')]);
    // Deliver in awkward 5-byte chunks: headers and a UTF-8 character split between chunks.
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 5) chunks.push(bytes.subarray(i, i + 5));
    expect(await all(demuxLines(modem, Readable.from(chunks)))).toEqual([
      `stdout ${T} one`,
      `stderr ${T} oops`,
      `stdout ${T} two`,
      `stdout ${T} three é`,
    ]);
  });

  it('ends on abort and destroys the stream', async () => {
    const stream = new Readable({ read() {} });
    stream.push(frame(1, 'first\n'));
    const abort = new AbortController();
    const seen: string[] = [];
    for await (const l of demuxLines(modem, stream, abort.signal)) {
      seen.push(l.line);
      abort.abort();
    }
    expect(seen).toEqual(['first']);
    expect(stream.destroyed).toBe(true);
  });
});

describe('followProgress', () => {
  const ndjson = (...objs: object[]) => Readable.from([objs.map((o) => JSON.stringify(o)).join('\n') + '\n']);

  it('resolves at the end and reports every message', async () => {
    const seen: string[] = [];
    await followProgress(ndjson({ status: 'Pulling fs layer', id: 'a' }, { status: 'Download complete', id: 'a' }), (m) => seen.push(m.status!));
    expect(seen).toEqual(['Pulling fs layer', 'Download complete']);
  });

  it('rejects with the engine message when the stream carries an error (status was 200)', async () => {
    const stream = ndjson({ stream: 'Step 1/2 : FROM x\n' }, { errorDetail: { code: 7, message: 'returned a non-zero code: 7' }, error: 'returned a non-zero code: 7' });
    await expect(followProgress(stream, () => {})).rejects.toThrow('returned a non-zero code: 7');
  });

  it('a line split across chunks, and a multi-byte character split across chunks, arrive whole', async () => {
    const text = JSON.stringify({ status: 'Pulling ✓' }) + '\n';
    const bytes = Buffer.from(text, 'utf8');
    const cut = bytes.indexOf(0xe2) + 1; // inside the check mark
    const seen: string[] = [];
    await followProgress(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]), (m) => seen.push(m.status!));
    expect(seen).toEqual(['Pulling ✓']);
  });

  it('a line that is not JSON rejects instead of throwing out of a stream listener', async () => {
    await expect(followProgress(Readable.from(['{"status":"ok"}\n<html>proxy error</html>\n']), () => {})).rejects.toThrow('not JSON');
  });

  it('a callback that throws rejects the promise', async () => {
    await expect(followProgress(ndjson({ status: 'a' }), () => { throw new Error('database is locked'); })).rejects.toThrow('database is locked');
  });

  it('a stream that errors twice rejects once and never leaves an error unhandled', async () => {
    const stream = new Readable({ read() {} });
    const done = followProgress(stream, () => {});
    stream.emit('error', new Error('socket hang up'));
    stream.emit('error', new Error('again'));
    await expect(done).rejects.toThrow('socket hang up');
  });
});
