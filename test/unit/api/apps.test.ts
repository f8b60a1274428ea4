import { describe, it, expect, beforeEach } from 'vitest';
import { appEvents, apps, deployEvents, deploys, envHistory, envVars, serviceLinks } from '../../../src/store/schema/index.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { observeApp } from '../../../src/observed/apps.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
});

const web = { name: 'web', fallback_port: 8080 };

describe('POST /api/apps', () => {
  it('creates with every default, answers 201 with the full record and enqueues the app and the proxy', async () => {
    const res = await t.request('POST', '/api/apps', web, { headers: { host: 'box.lan:3000' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: 1, name: 'web', app_type: 'managed', build_mode: 'external_ci', project_type: 'auto', source: null, repo_url: null,
      branch: 'main', internal_port: 3000, image_ref: null, domain: null, fallback_port: 8080, access_mode: 'port',
      health_check_path: '/', ci_workflow: null, code_host: null, repo_token_set: false, replicas: 1, resources: null, volumes: [], deploy_strategy: 'blue_green', drain_seconds: 30, jobs: [], previews: null, status: 'inactive', status_reason: null, serving: false, live_image: null, route_error: null, certificate_error: null, access_url: 'http://box.lan:8080', live_container_name: null,
      current_deploy_id: null, config_changed: false, created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect(t.enqueue.keys).toEqual(['app:web', 'jobs:web', 'proxy:main']);
    expect(t.db.select().from(apps).get()!.owner).toBe('rest');
  });

  it('domain mode: https://<domain>, host name lowercased; port mode uses SVC_PUBLIC_URL host when set', async () => {
    const res = await t.request('POST', '/api/apps', { name: 'site', access_mode: 'domain', domain: 'Shop.Example.COM', internal_port: 8000, image_ref: 'ghcr.io/a/b:1' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ domain: 'shop.example.com', access_url: 'https://shop.example.com', fallback_port: null, internal_port: 8000 });
    const pub = createTestApi({ env: { SVC_PUBLIC_URL: 'https://svc.example.com' } });
    await pub.login();
    expect((await pub.request('POST', '/api/apps', web)).body.access_url).toBe('http://svc.example.com:8080');
  });

  it('adopted_container needs a container name in source; external_service an http(s) URL', async () => {
    expect((await t.request('POST', '/api/apps', { ...web, app_type: 'adopted_container', source: 'legacy-web' })).status).toBe(201);
    const ext = await t.request('POST', '/api/apps', { name: 'ext', fallback_port: 8081, app_type: 'external_service', source: 'http://10.0.0.5:9000' });
    expect(ext.status).toBe(201);
    for (const [body, path] of [
      [{ name: 'a1', fallback_port: 9001, app_type: 'adopted_container' }, 'source'],
      [{ name: 'a2', fallback_port: 9002, app_type: 'adopted_container', source: 'bad name!' }, 'source'],
      [{ name: 'a3', fallback_port: 9003, app_type: 'external_service' }, 'source'],
      [{ name: 'a4', fallback_port: 9004, app_type: 'external_service', source: 'ftp://x.example' }, 'source'],
      [{ name: 'a5', fallback_port: 9005, app_type: 'external_service', source: 'not a url' }, 'source'],
    ] as const) {
      const res = await t.request('POST', '/api/apps', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details.issues[0].path).toBe(path);
    }
  });

  it.each([
    [{ fallback_port: 8080 }, 'name'],
    [{ name: 'Web', fallback_port: 8080 }, 'name'],
    [{ name: '1web', fallback_port: 8080 }, 'name'],
    [{ name: 'a'.repeat(64), fallback_port: 8080 }, 'name'],
    [{ name: 'web' }, 'fallback_port'],
    [{ name: 'web', fallback_port: 0 }, 'fallback_port'],
    [{ name: 'web', fallback_port: 65536 }, 'fallback_port'],
    [{ name: 'web', fallback_port: '8080' }, 'fallback_port'],
    [{ name: 'web', fallback_port: 3000 }, 'fallback_port'], // SVC_PORT: svc's own listener
    [{ name: 'web', fallback_port: 443 }, 'fallback_port'],
    [{ name: 'web', access_mode: 'domain' }, 'domain'],
    [{ name: 'web', access_mode: 'domain', domain: 'not a host' }, 'domain'],
    [{ name: 'web', access_mode: 'domain', domain: '-bad.example.com' }, 'domain'],
    [{ name: 'web', access_mode: 'tunnel', fallback_port: 8080 }, 'access_mode'],
    [{ name: 'web', app_type: 'vm', fallback_port: 8080 }, 'app_type'],
    [{ name: 'web', build_mode: 'magic', fallback_port: 8080 }, 'build_mode'],
    [{ name: 'web', project_type: 'cobol', fallback_port: 8080 }, 'project_type'],
    [{ name: 'web', internal_port: 70000, fallback_port: 8080 }, 'internal_port'],
    [{ name: 'web', health_check_path: 'health', fallback_port: 8080 }, 'health_check_path'],
    [{ name: 'web', branch: '-x', fallback_port: 8080 }, 'branch'],
    [{ name: 'web', image_ref: 'has space', fallback_port: 8080 }, 'image_ref'],
    [{ name: 'web', drain_seconds: 3601, fallback_port: 8080 }, 'drain_seconds'],
    [{ name: 'web', drain_seconds: -1, fallback_port: 8080 }, 'drain_seconds'],
    [{ name: 'web', drain_seconds: 1.5, fallback_port: 8080 }, 'drain_seconds'],
    [{ name: 'web', fallback_port: 8080, status: 'active' }, ''],
  ])('400 invalid_request for %j (issue at %s)', async (body, path) => {
    const res = await t.request('POST', '/api/apps', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.details.issues[0].path).toBe(path);
    expect(t.enqueue.keys).toEqual([]);
  });

  it('409 for a duplicate name, domain or fallback port', async () => {
    await t.request('POST', '/api/apps', web);
    await t.request('POST', '/api/apps', { name: 'site', access_mode: 'domain', domain: 'a.example.com' });
    for (const [body, field] of [
      [{ name: 'web', fallback_port: 8090 }, 'name'],
      [{ name: 'other', access_mode: 'domain', domain: 'A.example.com' }, 'domain'],
      [{ name: 'other', fallback_port: 8080 }, 'fallback_port'],
    ] as const) {
      const res = await t.request('POST', '/api/apps', body);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'conflict', details: { field } });
    }
  });

  it('400 for malformed JSON and 413 for a body over 1 MiB', async () => {
    expect((await t.request('POST', '/api/apps', undefined, { raw: '{"name":' })).status).toBe(400);
    const big = await t.request('POST', '/api/apps', undefined, { raw: JSON.stringify({ name: 'web', source: 'x'.repeat(1024 * 1024 + 1) }) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('too_large');
  });
});

describe('GET /api/apps and /api/apps/{id}', () => {
  it('lists newest first; the detail adds the deploy history newest first; non-numeric or unknown ids are 404', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    const b = (await t.request('POST', '/api/apps', { name: 'api', fallback_port: 8081 })).body;
    expect((await t.request('GET', '/api/apps')).body.map((x: { name: string }) => x.name)).toEqual(['api', 'web']);
    const d1 = t.db.insert(deploys).values({ appId: a.id, imageRef: 'img:1', trigger: 'manual', status: 'success' }).returning().get();
    const d2 = t.db.insert(deploys).values({ appId: a.id, imageRef: 'img:2', trigger: 'webhook', status: 'failed', error: 'pull failed' }).returning().get();
    const detail = await t.request('GET', `/api/apps/${a.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.deploys.map((d: { id: number }) => d.id)).toEqual([d2.id, d1.id]);
    expect(detail.body.deploys[0]).toMatchObject({ id: d2.id, app_id: a.id, image_ref: 'img:2', trigger: 'webhook', status: 'failed', error: 'pull failed', env_diff: null });
    expect((await t.request('GET', `/api/apps/${b.id}`)).body.deploys).toEqual([]);
    for (const id of ['abc', '0', '1.5', '999']) {
      const res = await t.request('GET', `/api/apps/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('config_changed: true when the config version moved past the live deploy, false without a live deploy', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    await t.request('POST', `/api/apps/${a.id}/env`, { key: 'A', value: '1' });
    expect((await t.request('GET', `/api/apps/${a.id}`)).body.config_changed).toBe(false);
    const version = t.db.select().from(apps).get()!.configVersion;
    const d = t.db.insert(deploys).values({ appId: a.id, imageRef: 'img:1', trigger: 'manual', status: 'success', configVersion: version }).returning().get();
    observeApp(t.db, a.id, { liveDeployId: d.id });
    expect((await t.request('GET', `/api/apps/${a.id}`)).body.config_changed).toBe(false);
    await t.request('POST', `/api/apps/${a.id}/env`, { key: 'A', value: '2' });
    expect((await t.request('GET', `/api/apps/${a.id}`)).body.config_changed).toBe(true);
    expect((await t.request('GET', '/api/apps')).body[0].config_changed).toBe(true);
  });
});

describe('PUT /api/apps/{id}', () => {
  it('updates only the given fields, checks the merged record, and enqueues', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    t.enqueue.keys.length = 0;
    const res = await t.request('PUT', `/api/apps/${a.id}`, { branch: 'release', internal_port: 8000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ branch: 'release', internal_port: 8000, fallback_port: 8080, access_mode: 'port' });
    expect(t.enqueue.keys).toEqual(['app:web', 'jobs:web', 'proxy:main']);
    // Switching to domain mode needs a domain, in the same request or already stored.
    expect((await t.request('PUT', `/api/apps/${a.id}`, { access_mode: 'domain' })).status).toBe(400);
    const switched = await t.request('PUT', `/api/apps/${a.id}`, { access_mode: 'domain', domain: 'web.example.com', fallback_port: null });
    expect(switched.body).toMatchObject({ access_mode: 'domain', domain: 'web.example.com', fallback_port: null, access_url: 'https://web.example.com' });
    // Keeping its own port or domain is no conflict.
    expect((await t.request('PUT', `/api/apps/${a.id}`, { domain: 'web.example.com' })).status).toBe(200);
  });

  it('400 for the name (immutable) or a bad field, 409 for a taken domain or port, 404 for an unknown app', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    await t.request('POST', '/api/apps', { name: 'api', fallback_port: 8081 });
    const renamed = await t.request('PUT', `/api/apps/${a.id}`, { name: 'other' });
    expect(renamed.status).toBe(400);
    expect(renamed.body.details.issues[0].path).toBe('name');
    expect((await t.request('PUT', `/api/apps/${a.id}`, { internal_port: -1 })).status).toBe(400);
    expect((await t.request('PUT', `/api/apps/${a.id}`, { id: 5 })).status).toBe(400);
    expect((await t.request('PUT', `/api/apps/${a.id}`, { fallback_port: 8081 })).status).toBe(409);
    expect((await t.request('PUT', '/api/apps/999', { branch: 'x' })).status).toBe(404);
    expect((await t.request('PUT', '/api/apps/x', { branch: 'x' })).status).toBe(404);
    expect((await t.request('GET', `/api/apps/${a.id}`)).body.fallback_port).toBe(8080);
  });
});

describe('replicas and resources (issue 19)', () => {
  it('stores replicas 0..50 and per-replica limits; resources null (or both members null) is unlimited', async () => {
    const a = (await t.request('POST', '/api/apps', { ...web, replicas: 3, resources: { memory_mb: 256, cpus: 0.5 } })).body;
    expect(a).toMatchObject({ replicas: 3, resources: { memory_mb: 256, cpus: 0.5 } });
    // A partial update leaves resources alone; given, resources is one value (a member left out is unlimited).
    expect((await t.request('PUT', `/api/apps/${a.id}`, { replicas: 0 })).body).toMatchObject({ replicas: 0, resources: { memory_mb: 256, cpus: 0.5 } });
    expect((await t.request('PUT', `/api/apps/${a.id}`, { resources: { cpus: 2 } })).body.resources).toEqual({ memory_mb: null, cpus: 2 });
    expect((await t.request('PUT', `/api/apps/${a.id}`, { resources: null })).body.resources).toBeNull();
    expect((await t.request('PUT', `/api/apps/${a.id}`, { resources: { memory_mb: null, cpus: null } })).body.resources).toBeNull();
    expect((await t.request('GET', '/api/apps')).body[0]).toMatchObject({ replicas: 0, resources: null });
  });

  it.each([
    [{ replicas: -1 }, 'replicas'],
    [{ replicas: 51 }, 'replicas'],
    [{ replicas: 1.5 }, 'replicas'],
    [{ replicas: '2' }, 'replicas'],
    [{ resources: { memory_mb: 5 } }, 'resources.memory_mb'],
    [{ resources: { memory_mb: 12.5 } }, 'resources.memory_mb'],
    [{ resources: { cpus: 0 } }, 'resources.cpus'],
    [{ resources: { cpus: -1 } }, 'resources.cpus'],
    [{ resources: { memory: 100 } }, 'resources'],
    [{ resources: 512 }, 'resources'],
  ])('400 for %j, nothing written', async (bad, path) => {
    const res = await t.request('POST', '/api/apps', { ...web, ...bad });
    expect(res.status).toBe(400);
    expect(res.body.details.issues[0].path).toBe(path);
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
  });
});

describe('DELETE /api/apps/{id}', () => {
  it('204: the row and everything hanging off it go in one transaction; the app key is enqueued for cleanup', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    await t.request('POST', `/api/apps/${a.id}/env`, { key: 'A', value: '1' });
    const svc = await t.request('POST', '/api/services', { name: 'db', type: 'postgres' });
    expect((await t.request('POST', `/api/apps/${a.id}/services`, { service_id: svc.body.id })).status).toBe(201);
    const d = t.db.insert(deploys).values({ appId: a.id, imageRef: 'i:1', trigger: 'manual' }).returning().get();
    t.db.insert(deployEvents).values({ deployId: d.id, timestamp: 'now', step: 'start', message: 'm' }).run();
    t.db.insert(appEvents).values({ appId: a.id, timestamp: 'now', step: 'heal', message: 'm' }).run();
    t.enqueue.keys.length = 0;

    expect((await t.request('DELETE', `/api/apps/${a.id}`)).status).toBe(204);
    expect(t.enqueue.keys).toEqual(['app:web', 'jobs:web', 'proxy:main']);
    for (const table of [apps, deploys, deployEvents, appEvents, envVars, envHistory, serviceLinks]) {
      expect(t.db.select().from(table).all()).toEqual([]);
    }
    expect((await t.request('GET', `/api/apps/${a.id}`)).status).toBe(404);
    expect((await t.request('DELETE', `/api/apps/${a.id}`)).status).toBe(404);
    // The name is free again.
    expect((await t.request('POST', '/api/apps', web)).status).toBe(201);
  });
});

describe('GET /api/apps/{id}/events', () => {
  it('app-level events oldest first, with app_id; 404 for an unknown app', async () => {
    const a = (await t.request('POST', '/api/apps', web)).body;
    expect((await t.request('GET', `/api/apps/${a.id}/events`)).body).toEqual([]);
    t.db.insert(appEvents).values({ appId: a.id, timestamp: '2026-01-01T00:00:01Z', step: 'heal', message: 'restarted', level: 'warn' }).run();
    t.db.insert(appEvents).values({ appId: a.id, timestamp: '2026-01-01T00:00:02Z', step: 'drift', message: 'address changed' }).run();
    const res = await t.request('GET', `/api/apps/${a.id}/events`);
    expect(res.body).toEqual([
      { id: 1, app_id: a.id, timestamp: '2026-01-01T00:00:01Z', level: 'warn', step: 'heal', message: 'restarted' },
      { id: 2, app_id: a.id, timestamp: '2026-01-01T00:00:02Z', level: 'info', step: 'drift', message: 'address changed' },
    ]);
    expect((await t.request('GET', '/api/apps/42/events')).status).toBe(404);
  });
});
