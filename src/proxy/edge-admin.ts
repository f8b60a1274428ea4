// The admin API of an edge Caddy (the manager's relay, an edge node's Caddy or relay) over a unix socket
// (socket-request.ts), and what svc asks of it: load a config unless it serves it, and the in-flight counts.
// Throws EdgeUnreachableError when the socket does not answer, so callers tell "down" from "refused".
import { socketRequest } from './socket-request.js';
import { rejection, upstreamCounts } from './admin.js';
import { canonicalJson, fingerprintOf, type Json } from './config.js';
import { EDGE_ADMIN_HOST } from '../runtime/swarm-edge-spec.js';

/** The relay's admin socket does not answer: the relay is not running (or not yet). */
export class EdgeUnreachableError extends Error {}

export type EdgeAdmin = (method: string, path: string, body?: string, timeoutMs?: number) => Promise<{ status: number; text: string }>;

/**
 * `via`: an edge node's admin API, reached through the manager's relay and the node's agent: headers naming
 * the agent and holding the key, and the agent's path prefix of that API (src/runtime/swarm-edge-spec.ts).
 */
export function createEdgeAdmin(socketPath: string, via?: { headers: Record<string, string>; prefix: string }): EdgeAdmin {
  return async (method, path, body, timeoutMs = 30_000) => {
    const unreachable = (why: string) => new EdgeUnreachableError(`the edge relay's admin API (${socketPath}) ${why}`);
    try {
      const res = await socketRequest({
        socketPath,
        path: `${via?.prefix ?? ''}${path}`,
        method,
        // Through the manager's relay, a new connection per call (socket-request.ts); the relay's own socket keeps its connections.
        fresh: via !== undefined,
        headers: { host: EDGE_ADMIN_HOST, ...via?.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body,
        timeoutMs,
        timedOut: () => unreachable(`did not answer within ${timeoutMs} ms`),
      });
      return { status: res.status, text: res.body.toString('utf8') };
    } catch (err) {
      if (err instanceof EdgeUnreachableError) throw err;
      throw unreachable(`is unreachable: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
}

/** Whether the Caddy has exactly `config` now: its fingerprint answers under `/id/<id>/<path>`. */
export const servesConfig = async (a: EdgeAdmin, config: Json, path: string, timeoutMs = 2000): Promise<boolean> =>
  (await a('GET', `/id/${fingerprintOf(config)}/${path}`, undefined, timeoutMs).catch(() => undefined))?.status === 200;

/** Loads `config` unless the Caddy already has it (its fingerprint answers, or the same JSON); `who` names it in errors. */
export async function ensureConfig(a: EdgeAdmin, config: Json, path: string, who: string): Promise<void> {
  if (await servesConfig(a, config, path, 3000)) return;
  const text = canonicalJson(config);
  const have = await a('GET', '/config/', undefined, 3000);
  if (have.status === 200) {
    try {
      if (canonicalJson(JSON.parse(have.text)) === text) return;
    } catch {
      /* not JSON: load */
    }
  } else if (have.status >= 500) {
    throw new Error(`${who}: its admin API is not reachable yet (HTTP ${have.status}: ${have.text.trim().slice(0, 200)})`);
  }
  const res = await a('POST', '/load', text, 15_000);
  if (res.status !== 200) throw rejection(`${who} rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 500)}`, res.text);
}

/** Adds the Caddy's in-flight requests per task address to `out`; nothing when it is down (nothing is in flight). */
export async function addUpstreams(a: EdgeAdmin, out: Map<string, number>, timeoutMs: number): Promise<Map<string, number>> {
  const res = await a('GET', '/reverse_proxy/upstreams', undefined, timeoutMs).catch((err: Error) => {
    if (err instanceof EdgeUnreachableError) return undefined;
    throw err;
  });
  if (res && res.status !== 200) throw new Error(`the edge relay's upstreams endpoint answered HTTP ${res.status}`);
  return res ? upstreamCounts(res.text, out) : out;
}
