// Turns anything thrown by a handler into the API's JSON error shape. Unknown errors become a 500 with
// no stack trace or message in the body (they may carry engine output); the log has the detail.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';

export function errorHandler(log: Logger) {
  return (err: Error, c: Context) => {
    if (err instanceof ApiError) {
      const body: Record<string, unknown> = { error: err.message, code: err.code };
      if (err.details) body.details = err.details;
      return c.json(body, err.status);
    }
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
