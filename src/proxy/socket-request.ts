// The one HTTP client svc has for unix sockets: the relays' admin APIs, the relay's agent server (a node's
// engine, Garage's admin API on the overlay). node:http, because the global fetch cannot dial a unix socket
// without the undici package. A new connection per call by default: the relays reload and are swapped, and a
// kept-alive connection a relay closed meanwhile fails the next call (EPIPE, seen under load).
import { request } from 'node:http';

export interface SocketAnswer {
  status: number;
  body: Buffer<ArrayBuffer>;
}

export interface SocketRequest {
  socketPath: string;
  method: string;
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** The whole exchange within this many ms, else `timedOut()`'s error; none when left out. */
  timeoutMs?: number;
  timedOut?: () => Error;
  signal?: AbortSignal;
  /** false: node's global agent (kept-alive connections), for a socket whose server is never swapped. */
  fresh?: boolean;
}

/** One request over a unix socket; status and body as they come back. The caller maps transport errors. */
export function socketRequest(o: SocketRequest): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...o.headers, ...(o.body === undefined ? {} : { 'content-length': Buffer.byteLength(o.body) }) };
    const req = request({ socketPath: o.socketPath, path: o.path, method: o.method, headers, ...(o.fresh === false ? {} : { agent: false }), timeout: o.timeoutMs, signal: o.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(o.timedOut?.() ?? new Error(`${o.socketPath} did not answer within ${o.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(o.body);
  });
}
