// The last 64 KiB of a run's output, kept in job_runs.output (stdout and stderr as the engine logged them).
import type { Runtime } from '../runtime/runtime.js';

export const OUTPUT_MAX_BYTES = 64 * 1024;

/** Keeps only the newest `max` bytes of `text` (cut at a line start when one is near). */
export function lastBytes(text: string, max = OUTPUT_MAX_BYTES): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return text;
  const tail = buf.subarray(buf.length - max).toString('utf8').replace(/^\uFFFD+/, '');
  const nl = tail.indexOf('\n');
  return nl >= 0 && nl < 1024 ? tail.slice(nl + 1) : tail;
}

/** The container's output, bounded while read: the lines before the last 64 KiB are dropped as they come. */
export async function collectOutput(runtime: Pick<Runtime, 'logs'>, container: string): Promise<string> {
  const lines: string[] = [];
  let bytes = 0;
  for await (const l of runtime.logs(container, { follow: false, tail: 20_000 })) {
    lines.push(l.line);
    bytes += Buffer.byteLength(l.line) + 1;
    while (bytes > OUTPUT_MAX_BYTES * 2 && lines.length > 1) bytes -= Buffer.byteLength(lines.shift()!) + 1;
  }
  return lastBytes(lines.length ? `${lines.join('\n')}\n` : '');
}
