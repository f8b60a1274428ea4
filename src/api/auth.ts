// Authentication endpoints (API.md "Authentication"): first-run setup, login, logout, who am I. Sessions
// are server-side (src/store/sessions.ts); the cookie only carries a random token. Failed logins are
// throttled per client address; a login naming an unknown user costs as much time as a wrong password.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { getCookie } from 'hono/cookie';
import { ApiError } from '../errors.js';
import { revokeSession } from '../store/sessions.js';
import { setupRequired } from '../store/users.js';
import { passesCsrf, SESSION_COOKIE } from './auth-guard.js';
import { LoginLimited, type AuthFlows } from './auth-flows.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { clientAddress, isHttps } from './http-context.js';
import { body } from './validate.js';

/** `Set-Cookie` for a session, exactly as API.md shows it, plus `Secure` over HTTPS. */
export function sessionCookie(c: Context, deps: Pick<ApiDeps, 'config'>, token: string, clear = false): string {
  const parts = [`${SESSION_COOKIE}=${clear ? '' : token}`, 'HttpOnly', 'SameSite=Lax', 'Path=/'];
  if (clear) parts.push('Max-Age=0');
  if (isHttps(c, deps.config)) parts.push('Secure');
  return parts.join('; ');
}

/**
 * The public setup and login forms change state without a session; they get the same CSRF rule as
 * cookie-authenticated requests, so another site cannot log a visitor into an account of its choosing.
 */
function requireSameSite(c: Context, deps: ApiDeps) {
  if (!passesCsrf(c, deps.config)) throw new ApiError(403, 'csrf', 'cross-site request refused: send Content-Type: application/json');
}

export function authRoutes(deps: ApiDeps, flows: AuthFlows) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;

  r.get('/auth/status', (c) => c.json({ setup_required: setupRequired(db) }));

  r.post('/auth/setup', async (c) => {
    requireSameSite(c, deps);
    if (!setupRequired(db)) throw new ApiError(409, 'conflict', 'setup is already done; log in instead');
    const { user, session } = await flows.setup(await body(c, z.unknown()));
    c.header('Set-Cookie', sessionCookie(c, deps, session));
    return c.json({ user }, 201);
  });

  r.post('/auth/login', async (c) => {
    requireSameSite(c, deps);
    try {
      const { user, session } = await flows.login(await body(c, z.unknown()), clientAddress(c));
      c.header('Set-Cookie', sessionCookie(c, deps, session));
      return c.json({ user });
    } catch (err) {
      if (!(err instanceof LoginLimited)) throw err;
      c.header('Retry-After', String(err.retryAfterSeconds));
      return c.json({ error: err.message, code: err.code }, 429);
    }
  });

  r.post('/auth/logout', (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (c.var.authVia === 'session' && token) revokeSession(db, token);
    c.header('Set-Cookie', sessionCookie(c, deps, '', true));
    return c.body(null, 204);
  });

  r.get('/auth/me', (c) => c.json({ user: c.var.user }));

  return r;
}
