// Blue/green deploys end to end: the real daemon, Docker engine, host Caddy and DNS responder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:http';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_CRASH, WEB_ENV, WEB_UNHEALTHY, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;

beforeAll(async () => {
  await ensureTestImages(runtime);
  t = await startTestDaemon('deploys');
});
afterAll(async () => {
  await t?.close();
});

const FINAL = ['success', 'failed', 'auto_rollback', 'cancelled'];

async function createApp(name: string, extra: Record<string, unknown> = {}) {
  const port = await freePort();
  const res = await t.api('POST', '/api/apps', { name, internal_port: 3000, access_mode: 'port', fallback_port: port, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as number, port };
}

async function deploy(appId: number, image: string) {
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as number;
}

async function finished(deployId: number, timeoutMs = 45_000) {
  return waitFor(
    async () => {
      const d = (await t.api('GET', `/api/deploys/${deployId}`)).body;
      return FINAL.includes(d.status) ? d : undefined;
    },
    { timeoutMs, what: `deploy ${deployId} to finish` },
  );
}

async function get(port: number, path = '/') {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, text: await res.text() };
}

const serves = (port: number, needle: string) =>
  waitFor(async () => (await get(port)).text.includes(needle), { timeoutMs: 10_000, what: `port ${port} to serve ${needle}` });

const appContainers = async (name: string) =>
  (await runtime.list({ [LABELS.instance]: t.instance, [LABELS.app]: name })).map((c) => ({ name: c.name, running: c.running }));

describe('blue/green deploys', () => {
  let app: { id: number; port: number };

  it('first deploy: events in the order of the spec, app active, served through Caddy', async () => {
    app = await createApp('bg');
    const id = await deploy(app.id, WEB_V1);
    const d = await finished(id);
    expect(d.status).toBe('success');
    const events = (await t.api('GET', `/api/deploys/${id}/events`)).body as { step: string; level: string; message: string }[];
    expect(events.map((e) => e.step)).toEqual(['start', 'pull', 'start', 'health_check', 'health_check', 'route_update', 'stop_old', 'finalize']);
    expect(events[0].message).toContain('bg');
    expect(events[0].message).toContain(WEB_V1);
    expect(events.find((e) => e.step === 'stop_old')!.message).toBe('no previous container');
    const detail = (await t.api('GET', `/api/apps/${app.id}`)).body;
    expect(detail).toMatchObject({ status: 'active', image_ref: WEB_V1, current_deploy_id: id, live_container_name: `${t.instance}-bg-${id}` });
    await serves(app.port, 'v1');
  });

  it('second deploy under load: no non-2xx response, old container gone', async () => {
    const counts = { ok: 0, bad: 0, errors: 0 };
    let stop = false;
    const loop = async () => {
      for (let i = 0; i < 5_000 && !stop; i++) {
        try {
          const post = i % 2 === 1;
          const res = await fetch(`http://127.0.0.1:${app.port}${post ? '/cgi-bin/echo' : '/'}`, { method: post ? 'POST' : 'GET', body: post ? 'x=1' : undefined, signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
          if (res.status >= 200 && res.status < 300) counts.ok++;
          else counts.bad++;
        } catch {
          counts.errors++;
        }
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    const id = await deploy(app.id, WEB_V2);
    const d = await finished(id);
    stop = true;
    await Promise.all(loops);
    expect(d.status).toBe('success');
    expect(counts.bad).toBe(0);
    expect(counts.ok).toBeGreaterThan(0);
    await serves(app.port, 'v2');
    // The deploy succeeds at the switch; the old version is gone once its drain ended (issue 37).
    await deployReaching(t, id, (x) => x.drain_until === null, 'to end its old version\'s drain', 20_000);
    const names = (await appContainers('bg')).map((c) => c.name);
    expect(names).toEqual([`${t.instance}-bg-${id}`]);
  });

  it('a failing health check rolls back automatically and the old version keeps serving', async () => {
    const id = await deploy(app.id, WEB_UNHEALTHY);
    const d = await finished(id, 60_000);
    expect(d.status).toBe('auto_rollback');
    const events = (await t.api('GET', `/api/deploys/${id}/events`)).body as { step: string; level: string }[];
    expect(events.at(-1)).toMatchObject({ step: 'health_check', level: 'error' });
    expect((await get(app.port)).text).toContain('v2');
    expect((await t.api('GET', `/api/apps/${app.id}`)).body.status).toBe('active');
    expect((await appContainers('bg')).length).toBe(1);
  });

  it('an image that exits fails fast', async () => {
    const started = Date.now();
    const id = await deploy(app.id, WEB_CRASH);
    const d = await finished(id);
    expect(d.status).toBe('auto_rollback');
    expect(d.error).toMatch(/exited/);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await get(app.port)).text).toContain('v2');
  });

  it('rollback redeploys the last good image that differs from the live one', async () => {
    const res = await t.api('POST', `/api/apps/${app.id}/deploys/rollback`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ trigger: 'rollback', image_ref: WEB_V1 });
    expect((await finished(res.body.id)).status).toBe('success');
    await serves(app.port, 'v1');
  });

  it('queued deploys: a newer one cancels the older pending one', async () => {
    const a = await deploy(app.id, WEB_V2);
    // `b` must queue behind a running `a` (a still-pending `a` would itself be superseded by `b`).
    await waitFor(async () => (await t.api('GET', `/api/deploys/${a}`)).body.status === 'running', { intervalMs: 5, what: 'a running' });
    const b = await deploy(app.id, WEB_V1);
    const c = await deploy(app.id, WEB_V2);
    const states = await Promise.all([a, b, c].map((id) => finished(id)));
    // `b` is pending behind the running `a` and is superseded by `c`.
    expect(states[1].status).toBe('cancelled');
    expect(states[2].status).toBe('success');
    await serves(app.port, 'v2');
  });

  it('heals the live container after docker kill and docker rm -f', async () => {
    const live = (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name as string;
    await runtime.docker.getContainer(live).kill();
    await serves(app.port, 'v2');
    await waitFor(async () => (await runtime.inspect(live))?.running, { timeoutMs: 10_000, what: 'restart after kill' });
    // The restart counter resets only after 10 s up; rm -f right away tests the recreate path with backoff 10 s.
    await runtime.remove(live);
    await waitFor(async () => (await runtime.inspect(live))?.running, { timeoutMs: 30_000, what: 'recreate after rm -f' });
    await serves(app.port, 'v2');
    // The heal event is written right after the container runs: wait for it rather than racing it.
    const heals = await waitFor(async () => {
      const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[];
      const h = events.filter((e) => e.step === 'heal');
      return h.length >= 2 ? h : undefined;
    });
    expect(heals[0].message).toMatch(/restarted/);
    expect(heals[1].message).toMatch(/recreated/);
  });
});

describe('deploy inputs and app lifecycle', () => {
  it('refuses a deploy with missing required env (422) and creates nothing', async () => {
    const app = await createApp('needs-env');
    await t.api('POST', `/api/apps/${app.id}/env`, { key: 'DATABASE_URL', value: '', is_secret: false, required: true });
    const res = await t.api('POST', `/api/apps/${app.id}/deploys`, { image_ref: WEB_V1 });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'missing_required_env', details: { missing: ['DATABASE_URL'] } });
    expect((await t.api('GET', `/api/apps/${app.id}/deploys`)).body).toEqual([]);
  });

  it('injects env vars, never shows secrets in events, and deletes cleanly', async () => {
    const app = await createApp('envapp');
    await t.api('POST', `/api/apps/${app.id}/env`, { key: 'GREETING', value: 'hello-there', is_secret: false, required: true });
    await t.api('POST', `/api/apps/${app.id}/env`, { key: 'API_SECRET', value: 'sup3r-s3cret-value', is_secret: true, required: false });
    const id = await deploy(app.id, WEB_ENV);
    expect((await finished(id)).status).toBe('success');
    const env = await waitFor(async () => {
      const r = await get(app.port, '/cgi-bin/env');
      return r.status === 200 ? r.text : undefined;
    });
    expect(env).toContain('GREETING=hello-there');
    expect(env).toContain('API_SECRET=sup3r-s3cret-value');
    const events = JSON.stringify((await t.api('GET', `/api/deploys/${id}/events`)).body);
    expect(events).not.toContain('sup3r-s3cret-value');
    expect((await t.api('GET', `/api/deploys/${id}`)).body.env_diff).toEqual({ added: ['API_SECRET', 'GREETING'], removed: [], changed: [] });

    expect((await t.api('DELETE', `/api/apps/${app.id}`)).status).toBe(204);
    await waitFor(async () => (await appContainers('envapp')).length === 0, { timeoutMs: 15_000, what: 'containers removed' });
    await waitFor(async () => get(app.port).then(() => false, () => true), { timeoutMs: 10_000, what: 'route removed' });
  });

  it('a daemon restart in the middle of a deploy ends it in a final state and leaves no orphan', async () => {
    const app = await createApp('restart');
    const id = await deploy(app.id, WEB_UNHEALTHY);
    await waitFor(async () => (await appContainers('restart')).length > 0, { timeoutMs: 20_000, what: 'staging container' });
    await t.restart();
    const d = await finished(id, 60_000);
    expect(d.status).toBe('auto_rollback');
    await waitFor(async () => (await appContainers('restart')).length === 0, { timeoutMs: 15_000, what: 'no orphan' });
  });

  it('domain mode serves HTTPS with the internal issuer', async () => {
    const res = await t.api('POST', '/api/apps', { name: 'secure', internal_port: 3000, access_mode: 'domain', domain: 'secure.svc.test' });
    expect(res.status).toBe(201);
    expect((await finished(await deploy(res.body.id, WEB_V1))).status).toBe('success');
    const port = t.httpsPort;
    const body = await waitFor(
      () =>
        new Promise<string | undefined>((resolve) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port, path: '/', servername: 'secure.svc.test', headers: { host: 'secure.svc.test' }, rejectUnauthorized: false, timeout: 5_000 },
            (r) => {
              let s = '';
              r.on('data', (c) => (s += c));
              r.on('end', () => resolve(r.statusCode === 200 ? s : undefined));
            },
          );
          req.on('error', () => resolve(undefined));
          req.end();
        }),
      { timeoutMs: 30_000, what: 'HTTPS answer' },
    );
    expect(body).toContain('v1');
  });

  it('streams logs of the live container as SSE', async () => {
    const app = await createApp('logs');
    expect((await finished(await deploy(app.id, WEB_V1))).status).toBe('success');
    const ctrl = new AbortController();
    const res = await fetch(`${t.url}/api/apps/${app.id}/logs/stream?tail=50`, { headers: { authorization: `Bearer ${t.token}` }, signal: ctrl.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    await waitFor(
      async () => {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
        return text.includes('svc-test web v1 starting');
      },
      { timeoutMs: 15_000, what: 'log line' },
    );
    expect(text).toContain('event: status\ndata: connected');
    expect(text).toMatch(/event: stdout\n(id: .+\n)?data: svc-test web v1 starting on port 3000\n(id: \d{4}-.+\n)?/);
    ctrl.abort();
  });
});

describe('adopted and external apps', () => {
  it('routes to an adopted container, and the first deploy replaces it blue/green without removing it', async () => {
    const source = 'svc-test-adoptee';
    await runtime.remove(source);
    try {
      await runtime.run({ name: source, image: WEB_V1, labels: { 'svc.test': 'adopted' } });
      const app = await createApp('adopted', { app_type: 'adopted_container', source });
      await serves(app.port, 'v1');
      expect((await t.api('GET', `/api/apps/${app.id}`)).body).toMatchObject({ status: 'active', live_container_name: source });
      const id = await deploy(app.id, WEB_V2);
      expect((await finished(id)).status).toBe('success');
      await serves(app.port, 'v2');
      // The adopted container is the old version: stopped once its drain ended (issue 37), kept.
      await deployReaching(t, id, (x) => x.drain_until === null, "to end the adoptee's drain", 20_000);
      const adoptee = await runtime.inspect(source);
      expect(adoptee).toBeDefined();
      expect(adoptee!.running).toBe(false);
      expect((await t.api('GET', `/api/apps/${app.id}`)).body.app_type).toBe('managed');
    } finally {
      await runtime.remove(source);
    }
  });

  it('routes an external_service app to its upstream URL and refuses deploys', async () => {
    const upstream = createServer((_req, res) => res.end('external upstream'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    try {
      const upstreamPort = (upstream.address() as { port: number }).port;
      const app = await createApp('external', { app_type: 'external_service', source: `http://127.0.0.1:${upstreamPort}` });
      await serves(app.port, 'external upstream');
      const res = await t.api('POST', `/api/apps/${app.id}/deploys`, { image_ref: WEB_V1 });
      expect(res.status).toBe(409);
    } finally {
      upstream.close();
    }
  });
});
