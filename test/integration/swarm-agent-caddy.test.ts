// The node agent's path with the real Caddy (2.6.2) on this machine, without a cluster: the relay's agent
// server (agent-server.ts) and an agent (swarm-agent-spec.ts `agentConfig`, its listener on a
// loopback address and the host's engine socket instead of the task's) in one Caddy. Through them, svc's
// own exec code (docker-exec.ts) and terminal code (docker-terminal.ts `openSession`, a TTY with stdin, the
// hijacked `Upgrade: tcp` both ways) reach a container of the host's engine; without the key, with a wrong
// one, or for any endpoint but exec, the agent answers 403; the relay dials nothing but an agent address;
// the key never reaches Caddy's log. The relay also carries the daemon's calls to a managed service's admin
// port (relay-fetch.ts: Garage's bucket and key setup on a Swarm).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create as createTar, Parser as TarParser } from 'tar';
import type Docker from 'dockerode';
import { createDockerClient } from '../../src/runtime/docker-client.js';
import { createExecOps } from '../../src/runtime/docker-exec.js';
import { openSession } from '../../src/runtime/docker-terminal.js';
import { agentServer } from '../../src/proxy/agent-server.js';
import { createRelayFetch } from '../../src/proxy/relay-fetch.js';
import { GARAGE_ADMIN_PORT } from '../../src/catalog/garage.js';
import { agentConfig, AGENT_PORT } from '../../src/runtime/swarm-agent-spec.js';
import { caddyBin } from '../support/caddy.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const KEY = 'a1'.repeat(32);
/** A loopback address of its own: the relay dials only `<IPv4>:2380`. */
const AGENT_AT = `127.38.${(process.pid >> 8) & 0xff}.${(process.pid & 0xff) || 1}`;
const name = `svc-test-agent-${process.pid}`;
let dir: string;
let socket: string;
let caddy: ChildProcess | undefined;
let caddyLog = '';
let host: Docker;

const client = (headers: Record<string, string>) => createDockerClient({ socketPath: socket, headers } as Docker.DockerOptions);
const good = { 'Svc-Agent-Dial': `${AGENT_AT}:${AGENT_PORT}`, 'Svc-Agent-Key': KEY };

/** One raw request through the relay's agent socket: its status. */
const status = (method: string, path: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });

beforeAll(async () => {
  await ensureTestImages();
  dir = await mkdtemp(join(tmpdir(), 'svc-agent-'));
  socket = join(dir, 'agent.sock');
  const agent = agentConfig(KEY, { listen: `${AGENT_AT}:${AGENT_PORT}`, engineSocket: '/var/run/docker.sock' }) as any;
  const config = {
    admin: agent.admin,
    logging: agent.logging,
    apps: { http: { servers: { agents: agentServer(socket), agent: agent.apps.http.servers.agent } } },
  };
  await writeFile(join(dir, 'caddy.json'), JSON.stringify(config));
  caddy = spawn(caddyBin(), ['run', '--config', join(dir, 'caddy.json')], { env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  caddy.stderr!.on('data', (b: Buffer) => (caddyLog = (caddyLog + b.toString()).slice(-20_000)));
  await waitFor(() => existsSync(socket), { timeoutMs: 10_000, what: `Caddy's agent socket (${caddyLog.slice(-500)})` });
  host = createDockerClient(undefined);
  const c = await host.createContainer({ name, Image: WEB_V1, Hostname: 'agent-target', Labels: { 'svc.test': 'agent-caddy' } });
  await c.start();
}, 60_000);

afterAll(async () => {
  await host?.getContainer(name).remove({ force: true }).catch(() => {});
  caddy?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('an exec through the relay and an agent (real Caddy)', () => {
  it("runs svc's exec and execToFile code and answers the container's output and exit code", async () => {
    const ops = createExecOps(client(good));
    const r = await ops.exec(name, ['sh', '-c', 'hostname; echo oops >&2; exit 3']);
    expect(r, caddyLog.slice(-2000)).toEqual({ exitCode: 3, stdout: 'agent-target\n', stderr: 'oops\n' });
    const file = join(dir, 'dump.txt');
    const f = await ops.execToFile(name, ['sh', '-c', 'seq 1 20000'], file);
    expect(f.exitCode).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text.split('\n')).toHaveLength(20001);
  });

  it('carries a terminal both ways: keys typed in, output and the exit code out', async () => {
    const session = await openSession(client(good))(name, ['sh'], { cols: 100, rows: 30 });
    let out = '';
    session.onData((b) => (out += b.toString()));
    const exited = new Promise<number>((r) => session.onExit(r));
    session.write('echo sum-$((40+2)); stty size\n');
    await waitFor(() => out.includes('sum-42') && out.includes('30 100'), { timeoutMs: 10_000, what: `the answer in ${JSON.stringify(out)}` });
    await session.resize(120, 40);
    session.write('stty size; exit 4\n');
    expect(await exited).toBe(4);
    expect(out).toContain('40 120');
  });

  it('the agent refuses a call without the key, with a wrong key, and any endpoint but exec and inspect', async () => {
    const create = `/containers/${name}/exec`;
    expect(await status('POST', create, { 'Svc-Agent-Dial': good['Svc-Agent-Dial'], 'content-type': 'application/json' })).toBe(403);
    expect(await status('POST', create, { ...good, 'Svc-Agent-Key': 'b2'.repeat(32), 'content-type': 'application/json' })).toBe(403);
    expect(await status('POST', create, { ...good, 'Svc-Agent-Key': KEY.slice(0, 63), 'content-type': 'application/json' })).toBe(403);
    for (const [method, path] of [['GET', '/containers/json'], ['GET', `/containers/${name}/logs`], ['POST', `/containers/${name}/json`], ['POST', '/containers/create'], ['POST', `/containers/${name}/stop`], ['GET', '/info'], ['POST', `/containers/${name}/exec/../kill`]]) {
      expect(await status(method!, path!, good), `${method} ${path}`).toBe(403);
    }
    // The one read it passes (whether a task that exited 137 was OOMKilled), and only with the key.
    expect(await status('GET', `/containers/${name}/json`, good)).toBe(200);
    expect(await status('GET', `/containers/${name}/json`, { 'Svc-Agent-Dial': good['Svc-Agent-Dial'] })).toBe(403);
    await expect(client({ ...good, 'Svc-Agent-Key': 'nope' }).getContainer(name).exec({ Cmd: ['true'] })).rejects.toMatchObject({ statusCode: 403 });
    // The container was never touched: still running.
    expect((await host.getContainer(name).inspect()).State.Running).toBe(true);
  });

  it("the agent passes a container's directory as tar, read (GET) and written (PUT), only with the key", async () => {
    await writeFile(join(dir, 'agent-put.txt'), 'through the agent\n');
    const withKey = client(good).getContainer(name);
    await withKey.putArchive(createTar({ cwd: dir, portable: true }, ['agent-put.txt']) as never, { path: '/' });
    const back = await withKey.getArchive({ path: '/agent-put.txt' });
    let text = '';
    await new Promise<void>((resolve, reject) => {
      const parse = new TarParser({ onReadEntry: (e) => e.on('data', (b: Buffer) => (text += b.toString())) });
      back.on('error', reject).pipe(parse).on('end', resolve).on('error', reject);
    });
    expect(text).toBe('through the agent\n');
    const archive = `/containers/${name}/archive?path=/agent-put.txt`;
    expect(await status('GET', archive, { 'Svc-Agent-Dial': good['Svc-Agent-Dial'] })).toBe(403);
    expect(await status('PUT', archive, { ...good, 'Svc-Agent-Key': 'b2'.repeat(32) })).toBe(403);
    for (const method of ['POST', 'DELETE', 'HEAD']) expect(await status(method, archive, good), method).toBe(403);
  });

  it('the relay dials only an agent address (IPv4 on the agent port); an agent that is not there is a bounded 502', async () => {
    expect(await status('GET', '/info', { ...good, 'Svc-Agent-Dial': '127.0.0.1:2375' })).toBe(403);
    expect(await status('GET', '/info', { 'Svc-Agent-Key': KEY })).toBe(403);
    const t0 = Date.now();
    expect(await status('POST', `/containers/${name}/exec`, { ...good, 'Svc-Agent-Dial': `127.38.255.254:${AGENT_PORT}` })).toBe(502);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it("carries the daemon's calls to a managed service's admin port (Garage's 3903) with relay-fetch, and no other port", async () => {
    const seen: { method?: string; url?: string; auth?: string; dial?: string; body: string }[] = [];
    const admin = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, dial: req.headers['svc-agent-dial'] as string | undefined, body: Buffer.concat(chunks).toString() });
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end('{"node":"n1"}');
      });
    });
    await new Promise<void>((r) => admin.listen(GARAGE_ADMIN_PORT, AGENT_AT, r));
    try {
      const f = createRelayFetch(socket);
      const got = await f(`http://${AGENT_AT}:${GARAGE_ADMIN_PORT}/v1/status?x=1`, { headers: { authorization: 'Bearer tok' } });
      expect([got.status, await got.json()]).toEqual([200, { node: 'n1' }]);
      const posted = await f(`http://${AGENT_AT}:${GARAGE_ADMIN_PORT}/v1/bucket`, { method: 'POST', headers: { authorization: 'Bearer tok', 'content-type': 'application/json' }, body: '{"globalAlias":"b"}' });
      expect(posted.status).toBe(201);
      expect(seen).toEqual([
        { method: 'GET', url: '/v1/status?x=1', auth: 'Bearer tok', dial: undefined, body: '' },
        { method: 'POST', url: '/v1/bucket', auth: 'Bearer tok', dial: undefined, body: '{"globalAlias":"b"}' },
      ]);
      expect((await f(`http://${AGENT_AT}:${GARAGE_ADMIN_PORT + 1}/v1/status`)).status).toBe(403);
    } finally {
      admin.close();
    }
  });

  it("never writes the key in Caddy's log, not even for a failed request (the error log lists its headers)", async () => {
    // An engine error passed through and a dial error of the relay: both logged with the request.
    expect(await status('POST', '/containers/no-such-container-here/exec', { ...good, 'content-type': 'application/json' })).toBe(400);
    expect(await status('POST', `/containers/${name}/exec`, { ...good, 'Svc-Agent-Dial': `127.38.255.254:${AGENT_PORT}` })).toBe(502);
    await waitFor(() => caddyLog.includes('127.38.255.254'), { timeoutMs: 5_000, what: "the relay's dial error in the log" });
    expect(caddyLog).not.toContain(KEY);
  });
});
