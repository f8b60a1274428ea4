// Which registered route a request reached, seen from a middleware that runs before it: the permission
// table is keyed by the route's pattern, not by the URL, so `/api/apps/7` and `/api/apps/8` share a rule.
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';

export interface Endpoint {
  method: string;
  path: string;
  params: Record<string, string>;
}

/** Splits a pattern such as `/api/apps/:appID/env/:key` against a path; undefined when they differ. */
export function paramsOf(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) {
      try {
        out[p[i].slice(1)] = decodeURIComponent(s[i]);
      } catch {
        return undefined;
      }
    } else if (p[i] !== s[i]) return undefined;
  }
  return out;
}

/**
 * A middleware: registered by `use` (method ALL) on a wildcard path. An `all('/exact', ...)` handler is not
 * one: it is an endpoint (method ALL) and needs its own rule, like any other.
 */
export const isMiddleware = (r: { method: string; path: string }) => r.method === 'ALL' && r.path.endsWith('*');

/**
 * The endpoint that will answer: the first matched route that is not a middleware. Undefined when only
 * middlewares match (the answer is a 404).
 */
export function endpointOf(c: Context): Endpoint | undefined {
  const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
  for (const route of matchedRoutes(c)) {
    if (isMiddleware(route)) continue;
    if (route.method !== method && route.method !== 'ALL') continue;
    const params = paramsOf(route.path, c.req.path);
    if (params) return { method: route.method, path: route.path, params };
  }
  return undefined;
}
