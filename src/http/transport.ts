// What the edges need to know about the request's transport: whether it came over HTTPS, the origin
// the server answers on, the client's address, and the host names URLs shown to it use. Written down once.
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Config } from '../config.js';

/** Scheme the client used: a TLS-terminating proxy says so in X-Forwarded-Proto. */
export function requestScheme(c: Context): 'http' | 'https' {
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  if (forwarded === 'https' || forwarded === 'http') return forwarded;
  return new URL(c.req.url).protocol === 'https:' ? 'https' : 'http';
}

/** True when the session cookie must be `Secure`: the request or the public URL is HTTPS. */
export const isHttps = (c: Context, config: Config): boolean =>
  requestScheme(c) === 'https' || (config.publicUrl?.startsWith('https:') ?? false);

/** The host the client addressed (Host header, else the URL's), with its port. */
export const requestHost = (c: Context): string => c.req.header('host') ?? new URL(c.req.url).host;

/** Origins a same-site browser request may carry: SVC_PUBLIC_URL's, and the request's own scheme + Host. */
export function serverOrigins(c: Context, config: Config): string[] {
  const origins = [`${requestScheme(c)}://${requestHost(c)}`.toLowerCase()];
  if (config.publicUrl) origins.push(new URL(config.publicUrl).origin.toLowerCase());
  return origins;
}

/**
 * The socket's remote address. Under `app.request()` (tests) there is no socket: 'unknown', which the
 * login limiter then treats as one client.
 */
export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The host name port-mode URLs use: SVC_PUBLIC_URL's, else the one the client used to reach svc (the same
 * machine serves both). Bracketed for IPv6 so it can go straight into a URL.
 */
export function publicHostname(c: Context, config: Config): string {
  if (config.publicUrl) return new URL(config.publicUrl).hostname;
  try {
    return new URL(`http://${requestHost(c)}`).hostname;
  } catch {
    return 'localhost';
  }
}

/** The URL the code host reaches svc at: SVC_PUBLIC_URL, else the scheme and host the user reached it on. */
export function publicBaseUrl(c: Context, config: Config): string {
  return config.publicUrl ?? `${requestScheme(c)}://${requestHost(c)}`;
}
