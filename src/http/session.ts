// The browser session at the HTTP edge: the cookie's name and how it is set, and the CSRF rule for
// cookie-authenticated writes. The API's auth wall and the UI's pages share these.
import type { Context } from 'hono';
import type { Config } from '../config.js';
import { isHttps, serverOrigins } from './transport.js';

export const SESSION_COOKIE = 'session';

/** `Set-Cookie` for a session, exactly as API.md shows it, plus `Secure` over HTTPS. */
export function sessionCookie(c: Context, deps: { config: Config }, token: string, clear = false): string {
  const parts = [`${SESSION_COOKIE}=${clear ? '' : token}`, 'HttpOnly', 'SameSite=Lax', 'Path=/'];
  if (clear) parts.push('Max-Age=0');
  if (isHttps(c, deps.config)) parts.push('Secure');
  return parts.join('; ');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True when a state-changing browser request provably comes from our own pages (or is not a form post). */
export function passesCsrf(c: Context, config: Config): boolean {
  if (SAFE_METHODS.has(c.req.method)) return true;
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') return true; // a cross-site form or no-CORS fetch cannot send this type
  const origin = c.req.header('origin')?.toLowerCase();
  return origin !== undefined && serverOrigins(c, config).includes(origin);
}
