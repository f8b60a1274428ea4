// The daemon's last resort against an error nobody handled (an 'error' event without a listener, a
// rejected promise nobody awaited). Every stream, socket and child the daemon owns has its own listener;
// this guard is for what slips through, and it decides by what the error is:
// - A network or socket failure (ECONNRESET, EPIPE, ENOTFOUND, ETIMEDOUT, a premature close, an abort ...)
//   is survivable: it belongs to one connection that Node has already torn down, better-sqlite3 writes are
//   synchronous so no transaction is left half-done, and whatever work owned the socket is redone by the
//   reconcilers' requeues and resync. The guard logs it and the daemon keeps serving.
// - Anything else (TypeError, RangeError, a failed assertion, a database error, an unknown value) means the
//   process's own state can no longer be trusted. The guard logs it with its stack and exits 1, as Node
//   would, so the supervisor restarts a clean process; a deploy step that keeps doing this is bounded by
//   the app reconciler's attempt count (src/reconcilers/app/attempts.ts) and ends `failed`.
import type { Logger } from './log.js';

/** Error codes of one connection's failure: Node's system errors for sockets and DNS, streams, undici. */
const SURVIVABLE_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH',
  'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'EADDRNOTAVAIL', 'ENOTCONN', 'ESHUTDOWN',
  'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END', 'ERR_SOCKET_CLOSED',
  'ERR_HTTP_REQUEST_TIMEOUT', 'ABORT_ERR', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_ABORTED',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
]);

/** True when `err` is a failure of one connection or stream, safe to log and survive (see above). */
export function isSurvivable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && SURVIVABLE_CODES.has(code)) return true;
  return err.name === 'AbortError';
}

interface ProcessLike {
  on(event: 'uncaughtException', listener: (err: unknown) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

export interface GuardOptions {
  log: Logger;
  /** The process to guard (tests pass an EventEmitter). */
  proc?: ProcessLike;
  /** How to end an unsafe process (default process.exit). */
  exit?: (code: number) => void;
}

/** Installs the guard for `svc serve`; returns a function that removes it. */
export function installProcessGuard(o: GuardOptions): () => void {
  const proc = o.proc ?? process;
  const exit = o.exit ?? ((code: number) => process.exit(code));
  const handle = (kind: 'uncaught exception' | 'unhandled rejection') => (err: unknown) => {
    const fields = {
      error: err instanceof Error ? err.message : String(err),
      code: (err as { code?: unknown } | undefined)?.code,
      stack: err instanceof Error ? err.stack : undefined,
    };
    if (isSurvivable(err)) {
      o.log.warn(`${kind} of a connection survived; the daemon keeps serving`, fields);
      return;
    }
    o.log.error(`${kind}: the daemon's state cannot be trusted; exiting so a clean process starts`, fields);
    exit(1);
  };
  const onException = handle('uncaught exception');
  const onRejection = handle('unhandled rejection');
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return () => {
    proc.off('uncaughtException', onException);
    proc.off('unhandledRejection', onRejection);
  };
}
