// Test code's requests to a Caddy admin API. Not the global fetch: Caddy 2.11's admin API answers 403
// ("client is not allowed to access from origin") to any request carrying `Sec-Fetch-Mode`, which Node's
// fetch (undici) always sends. Over node:http like svc's own admin client (src/proxy/admin-http.ts).
import { httpAdminRequest, type AdminAnswer } from '../../src/proxy/admin-http.js';

/** A fetch-shaped admin request (method and string body only); the answer has ok, status, text(), json(). */
export function adminFetch(url: string | URL, init?: { method?: string; body?: string | null; headers?: Record<string, string> }): Promise<AdminAnswer> {
  return httpAdminRequest(String(url), init?.method ?? 'GET', init?.body ?? undefined, 10_000);
}

/** The same typed as `fetch`, for the adapters' `fetch` option (tests that count or fake admin requests). */
export const adminFetchAsFetch = ((input: string | URL | Request, init?: RequestInit) =>
  adminFetch(input instanceof Request ? input.url : input, { method: init?.method, body: init?.body as string | undefined })) as unknown as typeof fetch;
