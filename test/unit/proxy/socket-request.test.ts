// svc's one unix-socket HTTP client (src/proxy/socket-request.ts): status and body as they come back, the body
// sent with its length, a server that does not answer in time ends in the caller's error, a missing socket in
// the transport's own error code (callers map ENOENT/ECONNREFUSED to "not running").
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { socketRequest } from '../../../src/proxy/socket-request.js';

describe('socketRequest', () => {
  let dir: string;
  let server: Server;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-socket-request-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/slow') return; // never answers
        res.writeHead(201, { 'content-type': 'text/plain' }).end(`${req.method} ${req.url} ${req.headers['content-length'] ?? '-'} ${Buffer.concat(chunks).toString()}`);
      });
    });
    await new Promise<void>((r) => server.listen(join(dir, 's.sock'), r));
  });
  afterEach(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers status and body; a body goes with its length', async () => {
    const res = await socketRequest({ socketPath: join(dir, 's.sock'), method: 'PUT', path: '/x?a=1', body: 'héllo' });
    expect([res.status, res.body.toString()]).toEqual([201, 'PUT /x?a=1 6 héllo']);
  });

  it("a server that does not answer in time ends in the caller's error", async () => {
    const p = socketRequest({ socketPath: join(dir, 's.sock'), method: 'GET', path: '/slow', timeoutMs: 100, timedOut: () => new Error('too slow') });
    await expect(p).rejects.toThrow('too slow');
  });

  it('a socket nobody listens on fails with the transport code', async () => {
    await expect(socketRequest({ socketPath: join(dir, 'none.sock'), method: 'GET', path: '/' })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
