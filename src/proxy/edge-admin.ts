// One request to the edge relay's admin API, over its unix socket (node:http: global fetch cannot dial a
// unix socket without the undici package). Answers status and body text; throws when the socket does not
// answer (the relay is not running), so callers tell "down" from "refused".
import { request } from 'node:http';
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
  return (method, path, body, timeoutMs = 30_000) =>
    new Promise<EdgeAdminAnswer>((resolve, reject) => {
      const req = request(
        {
          socketPath,
          path: `${via?.prefix ?? ''}${path}`,
          // Through the manager's relay, a new connection per call: the relay reloads at every switch, and a
          // kept-alive connection it closed then fails the next call (EPIPE, seen under load).
          ...(via ? { agent: false } : {}),
          method,
          headers: { host: EDGE_ADMIN_HOST, ...via?.headers, ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new EdgeUnreachableError(`the edge relay's admin API (${socketPath}) did not answer within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(err instanceof EdgeUnreachableError ? err : new EdgeUnreachableError(`the edge relay's admin API (${socketPath}) is unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`)));
      req.end(body);
    });
}
