// One request to Caddy's admin API, shared by both adapters (a Caddy of svc's own, a shared one): an
// unreachable API becomes one error that says which URL and which setting, never a bare fetch failure.
import { httpAdminRequest, type AdminAnswer } from './admin-http.js';
import { bindFailurePort, listenerPortsOf } from './bind-errors.js';

export type { AdminAnswer } from './admin-http.js';

export class ProxyUnreachableError extends Error {}
export class ProxyLoadError extends Error {}
/** A load rejected because one port listener could not bind (taken on the host): the caller can leave it out. */
export class ProxyBindError extends ProxyLoadError {
  constructor(message: string, readonly port: number) {
    super(message);
  }
}

/** The error for a rejected write: a ProxyBindError when Caddy says which port could not bind. */
export function rejection(message: string, detail: string): ProxyLoadError {
  const port = bindFailurePort(detail);
  return port === undefined ? new ProxyLoadError(message) : new ProxyBindError(message, port);
}

/** The ports Caddy's servers listen on now (one GET of its config). */
export async function heldPorts(admin: AdminRequest): Promise<Set<number>> {
  const res = await admin('GET', '/config/', undefined, 5000);
  if (!res.ok) {
    await res.body?.cancel();
    throw new ProxyLoadError(`Caddy answered HTTP ${res.status} to GET /config/`);
  }
  const text = await res.text();
  return listenerPortsOf(text.trim() ? JSON.parse(text) : null);
}

export type AdminRequest = (method: string, path: string, body?: string, timeoutMs?: number) => Promise<AdminAnswer>;

/** `fetch` is for tests (counting or faking requests); without it, node:http (admin-http.ts), or fetch for an https URL. */
export function createAdmin(o: { adminUrl: string; fetch?: typeof fetch; timeoutMs?: number }): { base: string; admin: AdminRequest } {
  const base = o.adminUrl.replace(/\/+$/, '');
  const doFetch = o.fetch ?? (base.startsWith('http:') ? undefined : fetch);
  const admin: AdminRequest = async (method, path, body, timeout = o.timeoutMs ?? 30_000) => {
    try {
      if (!doFetch) return await httpAdminRequest(`${base}${path}`, method, body, timeout);
      return await doFetch(`${base}${path}`, {
        method,
        body,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(timeout),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as { code?: string }).code ?? (err as Error).message;
      throw new ProxyUnreachableError(
        `Caddy admin API at ${base} is unreachable (${why}) during ${method} ${path}: is the proxy running? ` +
          `(every SVC_PROXY_MODE talks to Caddy at SVC_PROXY_ADMIN_URL)`,
      );
    }
  };
  return { base, admin };
}

/** In-flight request count per upstream address (`host:port`), from Caddy's upstreams endpoint. */
export async function upstreamRequests(admin: AdminRequest): Promise<Map<string, number>> {
  const res = await admin('GET', '/reverse_proxy/upstreams', undefined, 5000);
  if (!res.ok) throw new ProxyLoadError(`Caddy upstreams endpoint answered HTTP ${res.status}`);
  return upstreamCounts(await res.text());
}

/** Pure: the entries of an upstreams answer summed by address into `out`; anything but a JSON list is none. */
export function upstreamCounts(text: string, out = new Map<string, number>()): Map<string, number> {
  let list: unknown;
  try {
    list = JSON.parse(text || 'null');
  } catch {
    return out;
  }
  if (!Array.isArray(list)) return out;
  for (const u of list as { address?: string; num_requests?: number }[]) if (u.address) out.set(u.address, (out.get(u.address) ?? 0) + (u.num_requests ?? 0));
  return out;
}
