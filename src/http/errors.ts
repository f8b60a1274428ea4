// The one place a domain error becomes HTTP: kind -> status, and API.md's JSON shape
// `{"error": "<sentence>", "code": "<machine_code>", "details"?}`. Unknown errors become a 500 with no
// stack trace or message in the body (they may carry engine output); the log has the detail.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { DomainError, type ErrorKind } from '../errors.js';
import type { Logger } from '../log.js';

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 503;

export const STATUS_OF_KIND: Record<ErrorKind, ErrorStatus> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

/** The status of a thrown value: its kind's for a DomainError, 500 for anything else. */
export const statusOf = (err: unknown): ErrorStatus | 500 => (err instanceof DomainError ? STATUS_OF_KIND[err.kind] : 500);

/** API.md's error body of a domain error. */
export function errorBody(err: DomainError): Record<string, unknown> {
  const body: Record<string, unknown> = { error: err.message, code: err.code };
  if (err.details) body.details = err.details;
  return body;
}

export function errorHandler(log: Logger) {
  return (err: Error, c: Context) => {
    if (err instanceof DomainError) return c.json(errorBody(err), STATUS_OF_KIND[err.kind]);
    if (err instanceof HTTPException) {
      const status = err.status;
      const code = status === 413 ? 'too_large' : status === 401 ? 'unauthenticated' : 'invalid_request';
      return c.json({ error: err.message || 'request refused', code }, status);
    }
    log.error('unhandled error', { path: c.req.path, method: c.req.method, error: err.message });
    return c.json({ error: 'internal error', code: 'internal' }, 500);
  };
}

export const notFoundHandler = (c: Context) =>
  c.json({ error: `no route for ${c.req.method} ${c.req.path}`, code: 'not_found' }, 404);
