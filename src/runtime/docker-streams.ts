// Byte streams from the engine turned into values: NDJSON progress (pull, build) with its error messages,
// and multiplexed log streams split into timestamped lines (a line may arrive split across chunks).
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';
import type { LogLine } from './runtime.js';

/** Splits text chunks into complete lines, keeping a partial last line for the next chunk. */
export class LineSplitter {
  private rest = '';
  push(chunk: string): string[] {
    this.rest += chunk;
    const parts = this.rest.split('\n');
    this.rest = parts.pop()!;
    return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }
  /** The unterminated remainder at end of stream, if any. */
  flush(): string[] {
    const r = this.rest;
    this.rest = '';
    return r ? [r] : [];
  }
}

/** "2024-05-01T10:00:00.123456789Z hello" -> time and text (timestamps: true). */
export function parseLogLine(stream: LogLine['stream'], raw: string): LogLine {
  const i = raw.indexOf(' ');
  const time = i > 0 ? raw.slice(0, i) : '';
  if (i > 0 && /^\d{4}-\d\d-\d\dT/.test(time)) return { stream, time, line: raw.slice(i + 1) };
  return { stream, time: '', line: raw };
}

/** One JSON object of a pull or build stream. */
export interface ProgressMessage {
  status?: string;
  id?: string;
  progress?: string;
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: unknown;
}

/**
 * Follows a pull/build stream to its end and rejects on the first `error`/`errorDetail` message, which the
 * engine sends with a 200 status. Ours rather than docker-modem's followProgress, which throws a line that
 * is not JSON (or a throwing callback) out of a 'data' listener and drops its 'error' listener after the
 * first error: either one would be an uncaught exception in the daemon. Here the stream keeps an 'error'
 * listener for its whole life and nothing a callback throws escapes the promise.
 */
export function followProgress(stream: Readable, onMessage: (m: ProgressMessage) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const split = new LineSplitter();
    const utf8 = new StringDecoder('utf8');
    let failed: string | undefined;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      if (err) stream.destroy();
      if (err) reject(err);
      else if (failed !== undefined) reject(new Error(failed));
      else resolve();
    };
    const handle = (line: string) => {
      if (!line.trim()) return;
      let m: ProgressMessage;
      try {
        m = JSON.parse(line) as ProgressMessage;
      } catch {
        return finish(new Error(`the engine sent a progress line that is not JSON: ${line.slice(0, 200)}`));
      }
      if ((m.error || m.errorDetail) && failed === undefined) failed = m.errorDetail?.message ?? m.error ?? 'unknown error';
      try {
        onMessage(m);
      } catch (err) {
        finish(err instanceof Error ? err : new Error(String(err)));
      }
    };
    stream.on('data', (chunk: Buffer | string) => {
      if (settled) return;
      for (const line of split.push(typeof chunk === 'string' ? chunk : utf8.write(chunk))) handle(line);
    });
    stream.on('error', (err: Error) => finish(err));
    const end = () => {
      if (settled) return;
      for (const line of split.push(utf8.end())) handle(line);
      for (const line of split.flush()) handle(line);
      finish();
    };
    stream.on('end', end);
    stream.on('close', end);
  });
}

/**
 * Iterates the lines of a multiplexed log stream. Ends when the stream ends or `signal` aborts; the
 * stream is destroyed either way, so an abandoned follow holds no socket.
 */
export async function* demuxLines(modem: Docker['modem'], stream: Readable, signal?: AbortSignal): AsyncGenerator<LogLine> {
  const queue: LogLine[] = [];
  let done = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  // demuxStream only calls write(); a synchronous sink keeps every line ahead of the stream's 'end'.
  const sink = (kind: LogLine['stream']) => {
    const split = new LineSplitter();
    const utf8 = new StringDecoder('utf8'); // a character may be split across frames
    const writable = {
      write: (b: Buffer) => {
        for (const l of split.push(utf8.write(b))) queue.push(parseLogLine(kind, l));
        notify();
        return true;
      },
    } as unknown as Writable;
    return { writable, flush: () => split.flush().forEach((l) => queue.push(parseLogLine(kind, l))) };
  };
  const out = sink('stdout');
  const err = sink('stderr');
  const finish = (e?: Error) => {
    if (done) return;
    out.flush();
    err.flush();
    failure = e;
    done = true;
    notify();
  };
  const onAbort = () => finish();
  modem.demuxStream(stream, out.writable, err.writable);
  stream.on('end', () => finish());
  stream.on('close', () => finish());
  stream.on('error', (e) => finish(signal?.aborted ? undefined : e));
  signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (signal?.aborted) return;
      if (queue.length) {
        yield queue.shift()!;
        continue;
      }
      if (done) break;
      await new Promise<void>((r) => (wake = r));
    }
    if (failure) throw failure;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stream.destroy();
  }
}
