// The daemon's fetch onto the overlay through the edge relay (src/proxy/relay-fetch.ts): only plain HTTP to
// an IPv4 address and port (what the relay's agent server may dial), the address in Svc-Agent-Dial, over the
// relay's unix socket (here a node:http server standing for it), status and body as they come back.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRelayFetch, relayRequest } from '../../../src/proxy/relay-fetch.js';

describe('relayRequest', () => {
  it('names the address to dial, the path with its query and the host', () => {
    expect(relayRequest('http://10.0.1.5:3903/v1/key?id=a&showSecretKey=true')).toEqual({ dial: '10.0.1.5:3903', path: '/v1/key?id=a&showSecretKey=true', host: '10.0.1.5:3903' });
  });
  it.each(['https://10.0.1.5:3903/', 'http://garage:3903/', 'http://10.0.1.5/', 'http://[::1]:3903/'])('refuses %s', (url) => {
    expect(() => relayRequest(url)).toThrow(/only reaches http:\/\/<IPv4 address>:<port>/);
  });
});

describe('createRelayFetch', () => {
  let dir: string;
  let server: Server;
  const seen: { method?: string; url?: string; dial?: string; host?: string; auth?: string; body: string }[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-relay-fetch-'));
    seen.length = 0;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, dial: req.headers['svc-agent-dial'] as string, host: req.headers.host, auth: req.headers.authorization, body: Buffer.concat(chunks).toString() });
        res.writeHead(req.url === '/missing' ? 404 : 200).end(req.url === '/missing' ? 'no' : '{"ok":true}');
      });
    });
    await new Promise<void>((r) => server.listen(join(dir, 'agent.sock'), r));
  });
  afterEach(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the request over the socket with the address to dial; answers status and body', async () => {
    const f = createRelayFetch(join(dir, 'agent.sock'));
    const r = await f('http://10.0.1.5:3903/v1/bucket', { method: 'POST', headers: { authorization: 'Bearer t' }, body: '{"a":1}' });
    expect([r.status, await r.json()]).toEqual([200, { ok: true }]);
    const missing = await f('http://10.0.1.5:3903/missing');
    expect([missing.status, await missing.text()]).toEqual([404, 'no']);
    expect(seen).toEqual([
      { method: 'POST', url: '/v1/bucket', dial: '10.0.1.5:3903', host: '10.0.1.5:3903', auth: 'Bearer t', body: '{"a":1}' },
      { method: 'GET', url: '/missing', dial: '10.0.1.5:3903', host: '10.0.1.5:3903', auth: undefined, body: '' },
    ]);
  });

  it('a relay that is not running is said so', async () => {
    const f = createRelayFetch(join(dir, 'nothing.sock'));
    await expect(f('http://10.0.1.5:3903/v1/status')).rejects.toThrow(/the edge relay, svc's way onto the overlay, is not running yet/);
  });
});
