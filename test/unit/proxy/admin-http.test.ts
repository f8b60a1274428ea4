// Caddy's admin API over node:http (src/proxy/admin-http.ts), against a loopback server standing in for Caddy.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin, ProxyUnreachableError } from '../../../src/proxy/admin.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function standIn(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('Caddy admin over node:http', () => {
  it('answers status, text and JSON, and sends a body as JSON', async () => {
    const seen: string[] = [];
    const url = await standIn((req, res, body) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'} ${body}`);
      if (req.url === '/missing') return res.writeHead(404).end('not found');
      res.setHeader('content-type', 'application/json').end('{"a":[1,2]}');
    });
    const { admin } = createAdmin({ adminUrl: url + '/' });
    const got = await admin('GET', '/config/');
    expect([got.ok, got.status]).toEqual([true, 200]);
    expect(await got.json()).toEqual({ a: [1, 2] });
    const missing = await admin('GET', '/missing');
    expect([missing.ok, missing.status, await missing.text()]).toEqual([false, 404, 'not found']);
    const posted = await admin('POST', '/load', '{"x":1}');
    await posted.body?.cancel();
    expect(seen).toEqual(['GET /config/ - ', 'GET /missing - ', 'POST /load application/json {"x":1}']);
  });

  it('a keep-alive connection the server dropped between requests costs no failed request', async () => {
    // The first request on each connection is answered; a second one on it is cut without an answer
    // (what a client meets when Caddy closed an idle connection, or after a /load, as the request left).
    const answered = new WeakSet<Socket>();
    let cut = 0;
    const url = await standIn((req, res) => {
      if (answered.has(req.socket)) {
        cut++;
        return req.socket.destroy();
      }
      answered.add(req.socket);
      res.end('"ok"');
    });
    const { admin } = createAdmin({ adminUrl: url });
    for (let i = 0; i < 5; i++) expect(await (await admin('GET', '/config/')).text()).toBe('"ok"');
    expect(cut).toBeGreaterThan(0); // the pool did reuse connections, and each cut one was retried
  });

  it('a port nobody listens on, or an answer that does not come in time, is ProxyUnreachableError', async () => {
    const closed = await standIn(() => {});
    const port = new URL(closed).port;
    const s = servers.pop()!;
    await new Promise((r) => s.close(r));
    const refused = await createAdmin({ adminUrl: `http://127.0.0.1:${port}` }).admin('GET', '/config/').catch((e: Error) => e);
    expect(refused).toBeInstanceOf(ProxyUnreachableError);
    expect((refused as Error).message).toContain('ECONNREFUSED');

    const silent = await standIn(() => {}); // reads the request, never answers
    const t0 = Date.now();
    const slow = await createAdmin({ adminUrl: silent }).admin('GET', '/config/', undefined, 200).catch((e: Error) => e);
    expect(slow).toBeInstanceOf(ProxyUnreachableError);
    expect((slow as Error).message).toContain('TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('a body that stops half way within the time limit fails the read, and never throws out of band', async () => {
    const closed: Promise<unknown>[] = [];
    const url = await standIn((req, res) => {
      closed.push(new Promise((r) => req.socket.once('close', r)));
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"partial":');
    });
    const { admin } = createAdmin({ adminUrl: url });
    const answer = await admin('GET', '/config/', undefined, 200);
    expect(answer.status).toBe(200);
    await expect(answer.text()).rejects.toThrow('TIMEOUT');
    const unread = await admin('GET', '/config/', undefined, 200); // never read: its timeout must not crash the process
    expect(unread.ok).toBe(true);
    await closed[1]; // the timeout cut it

  });
});
