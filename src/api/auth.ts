// Authentication endpoints (API.md "Authentication"): first-run setup, login, logout, who am I. Sessions
// are server-side (src/store/sessions.ts); the cookie only carries a random token. Failed logins are
// throttled per client address; a login naming an unknown user costs as much time as a wrong password.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { getCookie } from 'hono/cookie';
import { conflict, forbidden } from '../errors.js';
import { LoginLimited, type AuthFlows } from '../http/auth-flows.js';
import { revokeSession } from '../store/sessions.js';
import { setupRequired } from '../store/users.js';
import { errorBody } from '../http/errors.js';
import { body } from '../http/request.js';
import { passesCsrf, sessionCookie, SESSION_COOKIE } from '../http/session.js';
import { clientAddress } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { setupSchema, loginSchema } from '../http/auth-flows.js';
import { userAnswerSchema } from '../presenters/account-json.js';

const op = operations('Authentication');

/**
 * The public setup and login forms change state without a session; they get the same CSRF rule as
 * cookie-authenticated requests, so another site cannot log a visitor into an account of its choosing.
 */
function requireSameSite(c: Context, deps: ApiDeps) {
  if (!passesCsrf(c, deps.config)) throw forbidden('csrf', 'cross-site request refused: send Content-Type: application/json');
}

export function authRoutes(deps: ApiDeps, flows: AuthFlows) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;

  r.get('/auth/status', op({ summary: 'Whether first-run setup is still open', response: z.object({ setup_required: z.boolean() }) }), (c) => c.json({ setup_required: setupRequired(db) }));

  r.post('/auth/setup', op({ summary: 'Create the first user (an owner) and log in', body: setupSchema, status: 201, response: userAnswerSchema, errors: { 403: 'csrf', 409: 'conflict: setup is already done' } }), async (c) => {
    requireSameSite(c, deps);
    if (!setupRequired(db)) throw conflict('setup is already done; log in instead');
    const { user, session } = await flows.setup(await body(c, z.unknown()));
    c.header('Set-Cookie', sessionCookie(c, deps, session));
    return c.json({ user }, 201);
  });

  r.post('/auth/login', op({ summary: 'Log in: sets the session cookie', body: loginSchema, response: userAnswerSchema, errors: { 401: 'unauthenticated: wrong user, password or code; totp_required: send totp or recovery_code', 403: 'csrf', 429: 'rate_limited: too many failures from this address (Retry-After)' } }), async (c) => {
    requireSameSite(c, deps);
    try {
      const { user, session } = await flows.login(await body(c, z.unknown()), clientAddress(c), c.req.header('user-agent'));
      c.header('Set-Cookie', sessionCookie(c, deps, session));
      return c.json({ user });
    } catch (err) {
      if (!(err instanceof LoginLimited)) throw err;
      c.header('Retry-After', String(err.retryAfterSeconds));
      return c.json(errorBody(err), 429);
    }
  });

  r.post('/auth/logout', op({ summary: 'Log out: ends the session', status: 204 }), (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (c.var.authVia === 'session' && token) revokeSession(db, token);
    c.header('Set-Cookie', sessionCookie(c, deps, '', true));
    return c.body(null, 204);
  });

  r.get('/auth/me', op({ summary: 'Who am I', response: userAnswerSchema }), (c) => c.json({ user: c.var.user }));

  return r;
}
