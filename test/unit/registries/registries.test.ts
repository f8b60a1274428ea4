// Registry credentials: which registry an image reference pulls from (as the engine decides), the commands
// and their refusals through the real API and store, the password sealed at rest and never answered, the
// lookup the runtime asks before a pull, the "test" login through the Runtime port (its fake), the
// Container registries page by role, and `svc registry` over a recording client.
import { describe, expect, it } from 'vitest';
import { registryCommand } from '../../../src/cli/registries.js';
import { registryAuthLookup } from '../../../src/desired/registries.js';
import { registryOf } from '../../../src/runtime/references.js';
import { listRegistryCredentials } from '../../../src/store/registries.js';
import { createTestApi } from '../../support/api.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { recordingClient as recording } from '../cli/recording-client.js';
import { formClient } from '../ui/form-client.js';

describe('registryOf', () => {
  it.each([
    ['postgres:16', 'docker.io'],
    ['library/postgres', 'docker.io'],
    ['acme/web:1', 'docker.io'],
    ['docker.io/acme/web', 'docker.io'],
    ['index.docker.io/acme/web', 'docker.io'],
    ['ghcr.io/acme/web:1', 'ghcr.io'],
    ['GHCR.io/acme/web', 'ghcr.io'],
    ['127.0.0.1:5000/web@sha256:' + 'a'.repeat(64), '127.0.0.1:5000'],
    ['localhost/web', 'localhost'],
    ['registry.example.com:5000/team/web:v2', 'registry.example.com:5000'],
  ])('%s pulls from %s', (ref, registry) => expect(registryOf(ref)).toBe(registry));
});

describe('the registries API', () => {
  it('adds, lists, changes and removes credentials; the password is sealed and never answered', async () => {
    const t = createTestApi();
    await t.login();
    const created = await t.request('POST', '/api/registries', { server: 'GHCR.io', username: 'ci-bot', password: 'ghp_secret123' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), server: 'ghcr.io', username: 'ci-bot', created_at: expect.any(String), updated_at: expect.any(String) });
    const row = listRegistryCredentials(t.db)[0];
    expect(row.secretSealed).not.toContain('ghp_secret123');
    expect(JSON.stringify((await t.request('GET', '/api/registries')).body)).not.toContain('ghp_secret123');
    expect(t.logs.join('\n')).not.toContain('ghp_secret123');

    // The runtime's lookup: by the registry of the image, Docker Hub's aliases folded.
    const lookup = registryAuthLookup(t.db, t.sealer);
    expect(lookup('ghcr.io/acme/web:1')).toEqual({ serveraddress: 'ghcr.io', username: 'ci-bot', password: 'ghp_secret123' });
    expect(lookup('acme/web:1')).toBeUndefined();
    expect((await t.request('POST', '/api/registries', { server: 'index.docker.io', username: 'me', password: 'dckr_pat_x' })).body.server).toBe('docker.io');
    expect(lookup('acme/web:1')).toMatchObject({ serveraddress: 'docker.io', username: 'me' });

    const changed = await t.request('PUT', `/api/registries/${created.body.id}`, { username: 'deploy-bot' });
    expect(changed.body.username).toBe('deploy-bot');
    expect(lookup('ghcr.io/x')).toEqual({ serveraddress: 'ghcr.io', username: 'deploy-bot', password: 'ghp_secret123' });
    expect((await t.request('DELETE', `/api/registries/${created.body.id}`)).status).toBe(204);
    expect(lookup('ghcr.io/x')).toBeUndefined();
    expect((await t.request('GET', `/api/registries/${created.body.id}`)).status).toBe(404);
  });

  it.each([
    [{ server: 'https://ghcr.io', username: 'u', password: 'p' }, 'server'],
    [{ server: 'ghcr.io/acme', username: 'u', password: 'p' }, 'server'],
    [{ server: 'ghcr.io:99999', username: 'u', password: 'p' }, 'server'],
    [{ server: 'ghcr.io', username: 'has space', password: 'p' }, 'username'],
    [{ server: 'ghcr.io', username: 'u', password: '' }, 'password'],
    [{ server: 'ghcr.io', username: 'u', password: 'p', extra: 1 }, ''],
  ])('refuses %j with 400 and stores nothing', async (body, field) => {
    const t = createTestApi();
    await t.login();
    const res = await t.request('POST', '/api/registries', body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(field);
    expect(listRegistryCredentials(t.db)).toEqual([]);
  });

  it('refuses a second entry for the same registry (409) and a viewer (403)', async () => {
    const t = createTestApi();
    await t.login();
    expect((await t.request('POST', '/api/registries', { server: 'ghcr.io', username: 'u', password: 'p' })).status).toBe(201);
    expect((await t.request('POST', '/api/registries', { server: 'ghcr.io', username: 'v', password: 'q' })).status).toBe(409);
    await t.login('vic', 'viewer');
    expect((await t.request('POST', '/api/registries', { server: 'quay.io', username: 'u', password: 'p' })).status).toBe(403);
    expect((await t.request('GET', '/api/registries')).status).toBe(200);
    expect(listRegistryCredentials(t.db).map((r) => r.server)).toEqual(['ghcr.io']);
  });

  it('"test" logs in through the engine: 200 with its answer, 502 registry_login_failed with the reason, never the password', async () => {
    const runtime = new FakeRuntime();
    const t = createTestApi({ runtime });
    await t.login();
    const id = (await t.request('POST', '/api/registries', { server: 'ghcr.io', username: 'u', password: 'hunter2-token' })).body.id;
    expect((await t.request('POST', `/api/registries/${id}/test`)).body).toEqual({ ok: true, status: 'Login Succeeded' });
    runtime.loginFailures.set('ghcr.io', 'login ghcr.io: (HTTP 401) unauthorized: bad credentials hunter2-token');
    const failed = await t.request('POST', `/api/registries/${id}/test`);
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ ok: false, code: 'registry_login_failed' });
    expect(failed.body.error).toMatch(/^login to ghcr.io failed: .*unauthorized: bad credentials \[secret\]$/);
    expect(t.logs.join('\n')).not.toContain('hunter2-token');
  });
});

describe('the Container registries page', () => {
  it('adds, tests and removes credentials for an administrator; a viewer reads the list without the forms', async () => {
    const runtime = new FakeRuntime();
    const t = createTestApi({ runtime });
    const admin = formClient(t.app);
    admin.jar.set('session', (await t.login('ada', 'owner')).cookie);
    await admin.get('/settings/registries');
    const added = await admin.post('/settings/registries', { server: 'ghcr.io', username: 'ci-bot', password: 'tok-123' });
    expect(added.status).toBe(200);
    expect(added.html).toContain('Credentials for ghcr.io added.');
    expect(added.html).not.toContain('tok-123');
    const id = listRegistryCredentials(t.db)[0].id;
    const tested = await admin.post(`/settings/registries/${id}/test`);
    expect(tested.html).toContain('Login to <strong>ghcr.io</strong>: <code>Login Succeeded</code>');
    const refused = await admin.post('/settings/registries', { server: 'not a host', username: 'u', password: 'p' });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('value="not a host"');

    const viewer = formClient(t.app);
    viewer.jar.set('session', (await t.login('vic', 'viewer')).cookie);
    const page = await viewer.get('/settings/registries');
    expect(page.html).toContain('ci-bot');
    expect(page.html).not.toContain('action="/settings/registries"');
    expect(page.html).not.toContain(`/settings/registries/${id}/test`);

    expect((await admin.post(`/settings/registries/${id}/delete`)).status).toBe(303);
    expect(listRegistryCredentials(t.db)).toEqual([]);
  });
});

describe('svc registry', () => {
  it('adds with the password from stdin, never from an argument; tests and removes by server', async () => {
    const { client, calls } = recording({
      'POST /api/registries': { id: 3, server: 'ghcr.io', username: 'ci-bot' },
      'GET /api/registries': [{ id: 3, server: 'ghcr.io', username: 'ci-bot', updated_at: '2026-11-25T10:00:00Z' }],
      'POST /api/registries/3/test': { ok: true, status: 'Login Succeeded' },
      'DELETE /api/registries/3': null,
    });
    const out: string[] = [];
    const write = (s: string) => void out.push(s);
    expect(await registryCommand(client, { action: 'add', server: 'ghcr.io', username: 'ci-bot', passwordStdin: true }, write, async () => 'tok-from-stdin\n')).toBe(0);
    expect(await registryCommand(client, { action: 'test', server: 'GHCR.IO' }, write)).toBe(0);
    expect(await registryCommand(client, { action: 'remove', server: 'ghcr.io' }, write)).toBe(0);
    expect(calls).toEqual([
      'POST /api/registries {"server":"ghcr.io","username":"ci-bot","password":"tok-from-stdin"}',
      'GET /api/registries',
      'POST /api/registries/3/test',
      'GET /api/registries',
      'DELETE /api/registries/3',
    ]);
    // Docker Hub's other names find its entry, as the API stores it.
    const hub = recording({ 'GET /api/registries': [{ id: 5, server: 'docker.io', username: 'me', updated_at: '' }], 'POST /api/registries/5/test': { ok: true, status: 'Login Succeeded' } });
    expect(await registryCommand(hub.client, { action: 'test', server: 'Index.Docker.io' }, write)).toBe(0);
    expect(hub.calls).toEqual(['GET /api/registries', 'POST /api/registries/5/test']);
    expect(out.join('')).toContain('ghcr.io: Login Succeeded');
    const saved = process.env.SVC_REGISTRY_PASSWORD;
    delete process.env.SVC_REGISTRY_PASSWORD;
    try {
      await expect(registryCommand(client, { action: 'add', server: 'ghcr.io', username: 'u' }, write)).rejects.toThrow(/--password-stdin, or in SVC_REGISTRY_PASSWORD/);
    } finally {
      if (saved !== undefined) process.env.SVC_REGISTRY_PASSWORD = saved;
    }
  });
});
