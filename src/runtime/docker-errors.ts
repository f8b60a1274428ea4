// Engine errors as plain Errors that carry the engine's own words, plus the status code so the adapter
// can tolerate the expected ones (404 missing, 304 already stopped, 409 removal in progress).
import { span } from '../trace.js';

/** An engine call failed; `message` names the operation and includes the engine's message. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly statusCode?: number,
    readonly engineMessage?: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

interface ModemError {
  statusCode?: number;
  json?: { message?: string } | null;
  reason?: string;
  message?: string;
  code?: string;
}

/** HTTP status of a dockerode error, if it has one. */
export const statusOf = (err: unknown): number | undefined => (err as ModemError | undefined)?.statusCode;

/** The engine's message without dockerode's "(HTTP code N) reason - " prefix. */
export function engineMessage(err: unknown): string {
  const e = err as ModemError | undefined;
  const fromJson = e?.json?.message;
  if (fromJson) return fromJson.trim();
  const msg = e?.message ?? String(err);
  const m = /^\(HTTP code \d+\) [^-]*- (.*)$/s.exec(msg);
  return (m ? m[1]! : msg).trim();
}

/** Wraps any failure of `op` (e.g. "start web-1") into an EngineError. */
export function engineError(op: string, err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const msg = engineMessage(err);
  return new EngineError(`docker ${op}: ${msg}`, statusOf(err), msg);
}

/** Runs an engine call, translating its failure; statuses in `tolerate` resolve to undefined. */
export async function call<T>(op: string, fn: () => Promise<T>, tolerate: number[] = []): Promise<T | undefined> {
  try {
    return await span('engine', op, fn);
  } catch (err) {
    const status = statusOf(err);
    if (status !== undefined && tolerate.includes(status)) return undefined;
    throw engineError(op, err);
  }
}
