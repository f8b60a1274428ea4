// One request to Caddy's admin API over node:http instead of the global fetch. The daemon asks Caddy once a
// second; fetch (undici) spent 2-3 times the CPU per request, and its first use alone added 12-17 MB of
// resident memory (docs/decisions/0023-idle-footprint.md). Answers the part of a fetch Response the adapters read.
import { Agent, request, type IncomingMessage } from 'node:http';

/** What the proxy adapters read of an answer: a fetch Response has it too (tests inject fetch). */
export interface AdminAnswer {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** Discards an answer the caller will not read. */
  readonly body?: { cancel(): Promise<void> } | null;
}

/** The transport failed (refused, reset, timed out); `code` as node's errors have it, or `TIMEOUT`. */
export class AdminTransportError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

// Keep-alive: a fresh TCP connection each second would cost Caddy and us more than the request.
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function httpAdminRequest(url: string, method: string, body: string | undefined, timeoutMs: number): Promise<AdminAnswer> {
  return attempt(url, method, body, timeoutMs).catch((err: unknown) => {
    // A keep-alive connection Caddy closed meanwhile (it does after a /load) fails before any answer:
    // the request never reached it, so once more on a new connection. Every admin call is idempotent.
    if (err instanceof ReusedSocketError) return attempt(url, method, body, timeoutMs);
    throw err;
  });
}

class ReusedSocketError extends Error {}

function attempt(url: string, method: string, body: string | undefined, timeoutMs: number): Promise<AdminAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request(url, { method, headers, agent });
    // The whole exchange, answer body included, within timeoutMs (as AbortSignal.timeout did with fetch).
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new AdminTransportError('TIMEOUT'));
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (req.reusedSocket && err.code === 'ECONNRESET') reject(new ReusedSocketError());
      else reject(err instanceof AdminTransportError ? err : new AdminTransportError(err.code ?? err.message));
    });
    req.on('response', (res) => {
      res.once('close', () => clearTimeout(timer));
      resolve(answerOf(res, () => timedOut));
    });
    req.end(body);
  });
}

function answerOf(res: IncomingMessage, timedOut: () => boolean): AdminAnswer {
  const status = res.statusCode ?? 0;
  // Listened to from the start: an answer destroyed by the timeout while nobody reads it must not throw.
  let failed: AdminTransportError | undefined;
  res.on('error', (err: NodeJS.ErrnoException) => (failed = new AdminTransportError(timedOut() ? 'TIMEOUT' : (err.code ?? err.message))));
  let text: Promise<string> | undefined;
  const read = () =>
    (text ??= new Promise<string>((resolve, reject) => {
      if (failed) return reject(failed);
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.once('close', () => reject(failed ?? new AdminTransportError(timedOut() ? 'TIMEOUT' : 'ECONNRESET'))); // a no-op after 'end'
    }));
  return {
    ok: status >= 200 && status < 300,
    status,
    text: read,
    json: async () => JSON.parse(await read()) as unknown,
    body: {
      async cancel() {
        // Read to the end and drop it, so the connection goes back to the pool.
        if (!text) res.resume();
      },
    },
  };
}
