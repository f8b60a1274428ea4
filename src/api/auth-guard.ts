// The auth wall in front of every `/api/*` route except the public ones. A request is authenticated by a
// bearer token (CLI, CI) or the session cookie (browser). Cookie-authenticated requests that change state
// must also pass the CSRF rule of API.md: JSON content type, or an Origin equal to the server's. Bearer
// requests need neither (a browser never attaches them on its own).
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { forbidden, unauthenticated } from '../errors.js';
import { sessionUser } from '../store/sessions.js';
import { tokenUser } from '../store/tokens.js';
import { passesCsrf, SESSION_COOKIE } from '../http/session.js';
import type { ApiDeps, ApiEnv } from './deps.js';

const PUBLIC_EXACT = new Set(['/api/auth/status', '/api/auth/setup', '/api/auth/login', '/api/codehost/setup-callback']);
const PUBLIC_PREFIXES = ['/api/webhooks/'];

/** Routes reachable without a user: first-run setup, login, signed webhooks, the code-host callback. */
export const isPublicPath = (path: string): boolean =>
  PUBLIC_EXACT.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p));

/** The bearer token of the request, undefined without an Authorization header; 401 for a malformed one. */
function bearer(c: Context): string | undefined {
  const header = c.req.header('authorization');
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('Authorization must be "Bearer <token>"');
  return m[1];
}

export function authGuard(deps: ApiDeps): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (isPublicPath(c.req.path)) return next();
    const token = bearer(c);
    if (token !== undefined) {
      const user = tokenUser(deps.db, token, deps.now());
      if (!user) throw unauthenticated('invalid or revoked API token');
      c.set('user', user);
      c.set('authVia', 'token');
      return next();
    }
    const cookie = getCookie(c, SESSION_COOKIE);
    const user = cookie ? sessionUser(deps.db, cookie, deps.now()) : undefined;
    if (!user) throw unauthenticated('log in first (session cookie or bearer token required)');
    if (!passesCsrf(c, deps.config)) {
      throw forbidden('csrf', 'cross-site request refused: send Content-Type: application/json or a same-origin Origin header');
    }
    c.set('user', user);
    c.set('authVia', 'session');
    return next();
  };
}
