// The engine answers a path it had to clean (`/images/../web/json`) with a redirect. The client must not
// follow it: following meant a request to a host named after user input, on a socket whose error nobody
// handled (the daemon died of `getaddrinfo ENOTFOUND web`). A fake engine on a unix socket plays the engine.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerClient } from '../../../src/runtime/docker-client.js';
import { createDockerRuntime } from '../../../src/runtime/docker.js';
import { InvalidReferenceError } from '../../../src/runtime/references.js';
import { silentLogger } from '../../../src/log.js';
import { waitFor } from '../../support/wait.js';

let dir: string;
let engine: Server;
let elsewhere: Server;
let elsewhereHits = 0;
let markers = 0;
const seen: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-fake-engine-'));
  elsewhere = createServer((req, res) => {
    if (req.url === '/marker') markers++;
    else elsewhereHits++;
    res.end('{}');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  const port = (elsewhere.address() as { port: number }).port;
  engine = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(301, { location: `http://127.0.0.1:${port}/web/json` });
    res.end('<a href="/web/json">Moved Permanently</a>.');
  });
  await new Promise<void>((r) => engine.listen(join(dir, 'docker.sock'), r));
});
afterAll(async () => {
  await new Promise((r) => engine.close(r));
  await new Promise((r) => elsewhere.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('createDockerClient', () => {
  it('never follows an engine redirect: the call fails, nothing else is contacted', async () => {
    const docker = createDockerClient({ socketPath: join(dir, 'docker.sock') });
    await expect(docker.getImage('../web').inspect()).rejects.toThrow();
    expect(seen).toContain('GET /images/../web/json');
    // A followed redirect would have reached the other server (or, with a bare host, a DNS lookup). A
    // request that never happens cannot be waited for; one sent after the call ended can: once the other
    // server has answered it, a redirect followed before it would have arrived too (plain dockerode fails).
    await fetch(`http://127.0.0.1:${(elsewhere.address() as { port: number }).port}/marker`);
    await waitFor(() => markers === 1);
    expect(elsewhereHits).toBe(0);
  });

  it('the runtime refuses an invalid reference before the engine sees it', async () => {
    const runtime = createDockerRuntime({ dockerHost: `unix://${join(dir, 'docker.sock')}`, log: silentLogger });
    const before = seen.length;
    await expect(runtime.hasImage('../web')).rejects.toThrow(InvalidReferenceError);
    await expect(runtime.pull('-x')).rejects.toThrow(InvalidReferenceError);
    await expect(runtime.inspect('../x')).rejects.toThrow(InvalidReferenceError);
    await expect(runtime.remove('a/../b')).rejects.toThrow(InvalidReferenceError);
    await expect(runtime.run({ name: 'ok', image: 'UPPER:v1', labels: {} })).rejects.toThrow(InvalidReferenceError);
    const logs = runtime.logs('../x', { follow: false })[Symbol.asyncIterator]();
    await expect(logs.next()).rejects.toThrow(InvalidReferenceError);
    expect(seen.length).toBe(before);
  });
});
