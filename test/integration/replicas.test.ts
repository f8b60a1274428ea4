// Replicas and limits on one host, end to end (issue 19): the real daemon, Docker engine, host Caddy and
// DNS responder. A 3-replica app serves balanced over its replicas with its limits on every container;
// one replica `docker kill`ed under a bounded GET load costs no GET and is healed alone; scaling adds and
// removes replicas of the live version (0 stops the app: 503, inactive); a replica of a new version that
// exits inside the watch window flips the whole app back to full replicas of the old one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'node:http';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_ENV, WEB_EXITS_LATER } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const WINDOW_S = 10;
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let app: { id: number; port: number };

beforeAll(async () => {
  await ensureTestImages(runtime);
  t = await startTestDaemon('replicas', { SVC_DEPLOY_WATCH_SECONDS: String(WINDOW_S) });
  const port = await freePort();
  const res = await t.api('POST', '/api/apps', { name: 'rp-web', internal_port: 3000, access_mode: 'port', fallback_port: port, replicas: 3, resources: { memory_mb: 64, cpus: 0.5 } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  app = { id: res.body.id, port };
});
afterAll(async () => {
  await t?.close();
});

const deploy = (image: string) => requestImageDeploy(t, app.id, image);
const until = (id: number, status: string, timeoutMs = 45_000) => deployReaching(t, id, (d) => d.status === status, `to be ${status}`, timeoutMs);

/** GET through the app's route; the env image prints the container's HOSTNAME (its short id). */
function get(agent: Agent, path = '/cgi-bin/env'): Promise<{ status: number; host?: string; error?: string }> {
  return new Promise((settle) => {
    const req = request({ host: '127.0.0.1', port: app.port, path, agent, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => settle({ status: res.statusCode ?? 0, host: /^HOSTNAME=(\S+)$/m.exec(body)?.[1] }));
      res.on('error', (err) => settle({ status: 0, error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => settle({ status: 0, error: err.message }));
    req.end();
  });
}
const ours = async () =>
  (await runtime.list({ [LABELS.instance]: t.instance, [LABELS.app]: 'rp-web' })).filter((c) => c.running).map((c) => c.name).sort();
const replicasServing = (n: number) =>
  waitFor(async () => {
    const running = await ours();
    if (running.length !== n) return undefined;
    const seen = new Set<string>();
    const agent = new Agent({ keepAlive: false });
    for (let i = 0; i < 30 * n; i++) {
      const r = await get(agent);
      if (r.status === 200 && r.host) seen.add(r.host);
    }
    return seen.size === n ? running : undefined;
  }, { timeoutMs: 30_000, what: `${n} replicas to answer through the route` });
const scale = async (replicas: number) => expect((await t.api('PUT', `/api/apps/${app.id}`, { replicas })).status).toBe(200);

describe('replicas and limits on one host', () => {
  it('a deploy starts 3 replicas with their limits; the route balances over all three', async () => {
    await until(await deploy(WEB_ENV), 'success');
    const names = await replicasServing(3);
    for (const name of names) {
      const doc = await runtime.docker.getContainer(name).inspect();
      expect(doc.HostConfig.Memory).toBe(64 * 1024 * 1024);
      expect(doc.HostConfig.NanoCpus).toBe(500_000_000);
    }
    expect((await t.api('GET', `/api/apps/${app.id}`)).body).toMatchObject({ status: 'active', replicas: 3, resources: { memory_mb: 64, cpus: 0.5 } });
  });

  it('one replica docker-killed under a bounded GET load costs no GET, and is healed alone', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const outcomes: { status: number; error?: string }[] = [];
    let stop = false;
    const clients = Array.from({ length: 8 }, async () => {
      for (let n = 0; !stop && n < 5_000; n++) outcomes.push(await get(agent));
    });
    const victim = (await ours())[1];
    const before = (await runtime.inspect(victim))!.startedAt;
    try {
      await waitFor(() => outcomes.length >= 200, { what: 'load before the kill', timeoutMs: 20_000 });
      await runtime.docker.getContainer(victim).kill();
      const killedAt = outcomes.length;
      await waitFor(async () => (await runtime.inspect(victim))?.running && (await runtime.inspect(victim))!.startedAt !== before, { what: 'the killed replica to be restarted', timeoutMs: 20_000 });
      await waitFor(() => outcomes.length >= killedAt + 400, { what: 'load after the kill', timeoutMs: 30_000 });
    } finally {
      stop = true;
      await Promise.all(clients);
      agent.destroy();
    }
    const failed = outcomes.filter((o) => o.status !== 200);
    console.log(`replicas: ${outcomes.length} GETs, ${failed.length} failed ${JSON.stringify(failed.slice(0, 5))}`);
    expect(failed).toEqual([]);
    const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[];
    expect(events.some((e) => e.step === 'heal' && e.message.includes(victim) && e.message.includes('restarted'))).toBe(true);
    await replicasServing(3);
  });

  it('scale down, to 0 (503, inactive, kept) and up again, without a deploy', async () => {
    const deploysBefore = (await t.api('GET', `/api/apps/${app.id}`)).body.deploys.length;
    await scale(1);
    await replicasServing(1);
    await scale(0);
    await waitFor(async () => (await ours()).length === 0, { what: 'every replica to stop' });
    const agent = new Agent({ keepAlive: false });
    await waitFor(async () => (await get(agent, '/')).status === 503, { what: 'the route to answer 503', timeoutMs: 10_000 });
    const detail = (await t.api('GET', `/api/apps/${app.id}`)).body;
    expect(detail).toMatchObject({ status: 'inactive', replicas: 0 });
    expect(detail.deploys.length).toBe(deploysBefore);
    await scale(2);
    await replicasServing(2);
    expect((await t.api('GET', `/api/apps/${app.id}`)).body).toMatchObject({ status: 'active', replicas: 2 });
    expect((await t.api('GET', `/api/apps/${app.id}`)).body.deploys.length).toBe(deploysBefore);
  });

  it('a replica of a new version that exits inside the watch window flips the whole app back', async () => {
    const live = (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name;
    const id = await deploy(WEB_EXITS_LATER);
    const d = await until(id, 'auto_rollback', 60_000);
    expect(d.error).toMatch(/exited with code/);
    const detail = (await t.api('GET', `/api/apps/${app.id}`)).body;
    expect(detail).toMatchObject({ status: 'active', image_ref: WEB_ENV, live_container_name: live });
    const names = await replicasServing(2);
    expect(names.every((n) => !n.includes(`-rp-web-${id}`))).toBe(true);
  });
});
