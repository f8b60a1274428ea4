// Authentication endpoints (API.md "Authentication"): first-run setup, login, logout, who am I. Sessions
// are server-side (src/store/sessions.ts); the cookie only carries a random token. Failed logins are
// throttled per client address; a login naming an unknown user costs as much time as a wrong password.
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { z } from 'zod';
import { createLoginLimiter } from '../auth/login-limiter.js';
import { hashPassword, verifyNothing, verifyPassword } from '../auth/password.js';
import { ApiError } from '../errors.js';
import { createSession, revokeSession } from '../store/sessions.js';
import { createFirstUser, findUserByName, setupRequired, userJson } from '../store/users.js';
import { passesCsrf, SESSION_COOKIE } from './auth-guard.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { clientAddress, isHttps } from './http-context.js';
import { body } from './validate.js';

const usernameSchema = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'must be 1-64 characters of letters, digits, _ . @ -');
const setupSchema = z.object({ username: usernameSchema, password: z.string().min(10, 'must be at least 10 characters').max(1024) }).strict();
const loginSchema = z.object({ username: z.string().max(256), password: z.string().max(1024) }).strict();

/** `Set-Cookie` for a session, exactly as API.md shows it, plus `Secure` over HTTPS. */
function sessionCookie(c: Context, deps: ApiDeps, token: string, clear = false): string {
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

export function authRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const limiter = createLoginLimiter(() => deps.now().getTime());

  r.get('/auth/status', (c) => c.json({ setup_required: setupRequired(db) }));

  r.post('/auth/setup', async (c) => {
    requireSameSite(c, deps);
    if (!setupRequired(db)) throw new ApiError(409, 'conflict', 'setup is already done; log in instead');
    const input = await body(c, setupSchema);
    const user = createFirstUser(db, input.username, await hashPassword(input.password));
    c.header('Set-Cookie', sessionCookie(c, deps, createSession(db, user.id, deps.now())));
    deps.log.info('first user created', { username: user.username });
    return c.json({ user }, 201);
  });

  r.post('/auth/login', async (c) => {
    requireSameSite(c, deps);
    const address = clientAddress(c);
    const limited = () => {
      const waitMs = limiter.blockedFor(address);
      if (waitMs <= 0) return undefined;
      c.header('Retry-After', String(Math.ceil(waitMs / 1000)));
      return c.json({ error: 'too many failed logins from this address; try again later', code: 'rate_limited' }, 429);
    };
    const early = limited();
    if (early) return early;
    const input = await body(c, loginSchema);
    // Checked again and counted as a failure in the same synchronous step, before the (slow) password
    // check, then forgiven on success: parallel guesses cannot all slip in under the limit.
    const late = limited();
    if (late) return late;
    limiter.fail(address);
    const user = findUserByName(db, input.username);
    const ok = user ? await verifyPassword(input.password, user.passwordHash) : await verifyNothing(input.password);
    if (!user || !ok) {
      deps.log.warn('login failed', { address });
      throw new ApiError(401, 'unauthenticated', 'wrong username or password');
    }
    limiter.forgive(address);
    c.header('Set-Cookie', sessionCookie(c, deps, createSession(db, user.id, deps.now())));
    return c.json({ user: userJson(user) });
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
