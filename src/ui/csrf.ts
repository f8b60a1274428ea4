// CSRF protection of the web UI's forms (API.md "Web UI": a form POST without its token is refused with
// 403 whatever its Origin). Double submit, signed: a random `csrf` cookie (HttpOnly, SameSite=Lax) and, in
// every form, an HMAC of it under a key derived from SVC_ENCRYPTION_KEY. Another site can neither read the
// cookie nor compute the token, and the same scheme covers the pre-session setup and login forms.
import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Config } from '../config.js';
import { randomToken, safeEqual } from '../crypto.js';
import { forbidden } from '../errors.js';
import { isHttps } from '../http/transport.js';

export const CSRF_COOKIE = 'csrf';
export const CSRF_FIELD = '_csrf';

export interface Csrf {
  /** The token for this request's forms; sets the cookie when the browser has none yet. */
  token(c: Context): string;
  /** Throws 403 `csrf` unless the submitted field matches the cookie. */
  check(c: Context, submitted: unknown): void;
}

export function createCsrf(config: Config): Csrf {
  const key = createHmac('sha256', config.encryptionKey).update('svc-ui-csrf-v1').digest();
  const sign = (cookie: string) => createHmac('sha256', key).update(cookie).digest('base64url');
  const issued = new WeakMap<Context, string>();

  return {
    token(c) {
      let cookie = getCookie(c, CSRF_COOKIE) ?? issued.get(c);
      if (!cookie || !/^[A-Za-z0-9_-]{20,100}$/.test(cookie)) {
        cookie = randomToken(24);
        issued.set(c, cookie);
        const secure = isHttps(c, config) ? '; Secure' : '';
        c.header('Set-Cookie', `${CSRF_COOKIE}=${cookie}; HttpOnly; SameSite=Lax; Path=/${secure}`, { append: true });
      }
      return sign(cookie);
    },
    check(c, submitted) {
      const cookie = getCookie(c, CSRF_COOKIE);
      if (!cookie || typeof submitted !== 'string' || !safeEqual(sign(cookie), submitted)) {
        throw forbidden('csrf', 'this form has expired or did not come from svc; reload the page and try again');
      }
    },
  };
}
