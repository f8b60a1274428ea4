// One request to the edge relay's admin API, over its unix socket (socket-request.ts). Answers status and body
// text; throws when the socket does not answer (the relay is not running), so callers tell "down" from "refused".
import { socketRequest } from './socket-request.js';
import { EDGE_ADMIN_HOST } from './edge-config.js';

/** The relay's admin socket does not answer: the relay is not running (or not yet). */
export class EdgeUnreachableError extends Error {}

export interface EdgeAdminAnswer {
  status: number;
  text: string;
}

export type EdgeAdmin = (method: string, path: string, body?: string, timeoutMs?: number) => Promise<EdgeAdminAnswer>;

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
