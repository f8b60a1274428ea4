// Journey: a team's month on one svc. The owner runs two apps and invites a developer limited to one of
// them and a viewer. The developer deploys (with the CLI) and rolls back their app, replaces its secret but
// cannot read it, and cannot touch the other app; the viewer reads everything and changes nothing. The
// audit log names every change (who, which app, which variable) and never a value. Every step asserts what
// the users see: API answers, what the proxy serves, what the CLI prints. One daemon, steps in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { runSvc } from '../support/svc-cli.js';
import { waitFor } from '../support/wait.js';

const SECRET_1 = 'sk-live-first-7f3a91c2';
const SECRET_2 = 'sk-live-rotated-e81b44d0';
const DEV_PASSWORD = 'developer password 42';
const VIEWER_PASSWORD = 'viewer password 42 too';

let t: TestDaemon;
let work: string;
let cacheId = 0;
const apps: Record<'web' | 'api', { id: number; port: number }> = {} as never;
const tokens: Record<'developer' | 'viewer', string> = { developer: '', viewer: '' };

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  work = mkdtempSync(join(tmpdir(), 'svc-journey-team-'));
  t = await startTestDaemon('jteam', serviceImageEnv());
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A request as `token` (a teammate's), answering status and parsed body. */
async function as(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

const served = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined);
  return res?.ok ? res.text() : '';
};
const serving = (port: number, text: string) => waitFor(async () => (await served(port)).includes(text), { timeoutMs: 30_000, what: `port ${port} to serve "${text}"` });
const finished = (id: number) => deployReaching(t, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 90_000);
const svc = (token: string, ...args: string[]) => runSvc(args, { cwd: work, env: { SVC_URL: t.url, SVC_TOKEN: token } });

/** Accepts an invitation as a new teammate and makes their API token with the session it gives. */
async function join_(invite: { token: string }, username: string, password: string): Promise<string> {
  const accepted = await fetch(`${t.url}/api/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: invite.token, username, password }) });
  expect(accepted.status, await accepted.clone().text()).toBe(201);
  const cookie = accepted.headers.get('set-cookie')!.split(';')[0];
  const tok = await fetch(`${t.url}/api/tokens`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ name: `${username}-laptop` }) });
  expect(tok.status).toBe(201);
  return ((await tok.json()) as { token: string }).token;
}

describe('journey: a team shares one svc', () => {
  it('the owner runs two apps, web with a secret, both serving v1', async () => {
    for (const name of ['web', 'api'] as const) {
      const port = await freePort();
      const created = await t.api('POST', '/api/apps', { name, image_ref: WEB_V1, internal_port: WEB_PORT, fallback_port: port });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      apps[name] = { id: created.body.id, port };
    }
    const cache = await t.api('POST', '/api/services', { name: 'cache', type: 'redis' });
    expect(cache.status).toBe(201);
    cacheId = cache.body.id;
    const secret = await t.api('POST', `/api/apps/${apps.web.id}/env`, { key: 'API_KEY', value: SECRET_1, is_secret: true });
    expect(secret.status).toBe(201);
    expect(secret.body).toMatchObject({ key: 'API_KEY', is_secret: true, value: null });
    for (const name of ['web', 'api'] as const) expect((await finished(await requestImageDeploy(t, apps[name].id, WEB_V1))).status).toBe('success');
    await serving(apps.web.port, 'svc-test web v1');
    await serving(apps.api.port, 'svc-test web v1');
  });

  it('the owner invites a developer limited to web and a viewer; both join and see their roles', async () => {
    const dev = await t.api('POST', '/api/invitations', { role: 'developer', apps: ['web'] });
    expect(dev.status, JSON.stringify(dev.body)).toBe(201);
    expect(dev.body).toMatchObject({ role: 'developer', apps: ['web'], path: `/invite/${dev.body.token}` });
    const viewer = await t.api('POST', '/api/invitations', { role: 'viewer' });
    expect(viewer.status).toBe(201);
    expect((await t.api('GET', '/api/invitations')).body).toHaveLength(2);

    tokens.developer = await join_(dev.body, 'dana', DEV_PASSWORD);
    tokens.viewer = await join_(viewer.body, 'victor', VIEWER_PASSWORD);
    // A link works once.
    const again = await fetch(`${t.url}/api/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: dev.body.token, username: 'mallory', password: 'another password 1' }) });
    expect(again.status).toBe(404);

    expect((await as(tokens.developer, 'GET', '/api/auth/me')).body.user).toMatchObject({ username: 'dana', role: 'developer', apps: ['web'] });
    expect((await as(tokens.viewer, 'GET', '/api/auth/me')).body.user).toMatchObject({ username: 'victor', role: 'viewer' });
    const users = (await t.api('GET', '/api/users')).body as { username: string; role: string }[];
    expect(users.map((u) => [u.username, u.role]).sort()).toEqual([['admin', 'owner'], ['dana', 'developer'], ['victor', 'viewer']]);
    expect((await t.api('GET', '/api/invitations')).body).toEqual([]);
  });

  it('the developer deploys web v2 with the CLI and the proxy serves it', async () => {
    const out = await svc(tokens.developer, 'deploy', 'web', '--image', WEB_V2, '--follow');
    expect(out.code, out.stderr + out.stdout).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`^deploy \\d+ of ${WEB_V2} queued\\n`));
    expect(out.stdout).toMatch(/route_update/);
    expect(out.stdout).toMatch(/deploy \d+: success\n$/);
    await serving(apps.web.port, 'svc-test web v2');
    const deploys = (await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}/deploys`)).body as any[];
    expect(deploys[0]).toMatchObject({ image_ref: WEB_V2, status: 'success', origin: 'cli', trigger: 'manual' });
  });

  it('the developer rolls web back to v1', async () => {
    const rb = await as(tokens.developer, 'POST', `/api/apps/${apps.web.id}/deploys/rollback`);
    expect(rb.status, JSON.stringify(rb.body)).toBe(202);
    expect(rb.body).toMatchObject({ trigger: 'rollback', image_ref: WEB_V1 });
    expect((await finished(rb.body.id)).status).toBe('success');
    await serving(apps.web.port, 'svc-test web v1');
    expect((await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}`)).body).toMatchObject({ image_ref: WEB_V1, status: 'active' });
  });

  it('the developer configures web: adds a variable and replaces the secret, which stays masked', async () => {
    expect((await as(tokens.developer, 'POST', `/api/apps/${apps.web.id}/env`, { key: 'FEATURE_FLAGS', value: 'beta' })).status).toBe(201);
    const replaced = await as(tokens.developer, 'POST', `/api/apps/${apps.web.id}/env`, { key: 'API_KEY', value: SECRET_2, is_secret: true });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ key: 'API_KEY', is_secret: true, value: null });
    const env = (await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}/env`)).body as any[];
    expect(env.find((v) => v.key === 'API_KEY')).toMatchObject({ is_secret: true, value: null });
    expect(env.find((v) => v.key === 'FEATURE_FLAGS')).toMatchObject({ value: 'beta' });
    const history = (await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}/env/API_KEY/history`)).body as any[];
    expect(history.map((h) => [h.action, h.value])).toEqual([['updated', null], ['created', null]]);
    expect(JSON.stringify(history)).not.toContain(SECRET_1);
    expect((await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}`)).body.config_changed).toBe(true);
  });

  // Issue 35 item 4: only admins and owners reveal; a developer sees that a secret is set, never its value.
  it('the developer cannot reveal the secret of their own app (403) nor read service credentials', async () => {
    // Service credentials (already `manage`): the developer reads the service, never its password.
    expect((await as(tokens.developer, 'GET', `/api/services/${cacheId}/credentials`)).status).toBe(403);
    const service = await as(tokens.developer, 'GET', `/api/services/${cacheId}`);
    expect(service.status).toBe(200);
    expect(service.body).not.toHaveProperty('password');
    const reveal = await as(tokens.developer, 'GET', `/api/apps/${apps.web.id}/env/API_KEY/reveal`);
    expect(reveal.status).toBe(403);
    expect(reveal.body.code).toBe('forbidden');
    expect(JSON.stringify(reveal.body)).not.toContain(SECRET_2);
  });

  it('the developer cannot touch api: deploy, rollback, env, settings, delete are 403 and api keeps serving v1', async () => {
    const before = (await t.api('GET', `/api/apps/${apps.api.id}/deploys`)).body.length;
    const refusals = [
      await as(tokens.developer, 'POST', `/api/apps/${apps.api.id}/deploys`, { image_ref: WEB_V2 }),
      await as(tokens.developer, 'POST', `/api/apps/${apps.api.id}/deploys/rollback`),
      await as(tokens.developer, 'POST', `/api/apps/${apps.api.id}/env`, { key: 'X', value: 'y' }),
      await as(tokens.developer, 'PUT', `/api/apps/${apps.api.id}`, { health_check_path: '/x' }),
      await as(tokens.developer, 'DELETE', `/api/apps/${apps.api.id}`),
      await as(tokens.developer, 'POST', '/api/apps', { name: 'sneaky', image_ref: WEB_V1, fallback_port: await freePort() }),
      await as(tokens.developer, 'PUT', `/api/apps/${apps.web.id}`, { health_check_path: '/x' }),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect(refusals[0].body).toMatchObject({ code: 'forbidden', error: 'your account is limited to the apps web' });
    const cli = await svc(tokens.developer, 'deploy', 'api', '--image', WEB_V2);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('your account is limited to the apps web');
    expect(cli.stderr).not.toMatch(/\n\s+at /);
    expect((await t.api('GET', `/api/apps/${apps.api.id}/deploys`)).body.length).toBe(before);
    expect((await t.api('GET', `/api/apps/${apps.api.id}/env`)).body).toEqual([]);
    expect(await served(apps.api.port)).toContain('svc-test web v1');
    expect((await t.api('GET', '/api/apps')).body.map((a: { name: string }) => a.name).sort()).toEqual(['api', 'web']);
  });

  it('the viewer reads apps, deploys, masked variables and the audit log; every change is 403', async () => {
    const list = await svc(tokens.viewer, 'apps');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+STATUS/);
    expect(list.stdout).toMatch(/\napi\s+active\s/);
    expect(list.stdout).toMatch(/\nweb\s+active\*\s/); // config_changed: the developer's change awaits a deploy
    expect((await as(tokens.viewer, 'GET', `/api/apps/${apps.web.id}/deploys`)).body.map((d: any) => d.trigger)).toEqual(['rollback', 'manual', 'manual']);
    const env = (await as(tokens.viewer, 'GET', `/api/apps/${apps.web.id}/env`)).body as any[];
    expect(env.find((v) => v.key === 'API_KEY')).toMatchObject({ value: null });
    expect((await as(tokens.viewer, 'GET', '/api/audit')).status).toBe(200);
    const refused = [
      await as(tokens.viewer, 'POST', `/api/apps/${apps.web.id}/deploys`, {}),
      await as(tokens.viewer, 'POST', `/api/apps/${apps.web.id}/env`, { key: 'X', value: 'y' }),
      await as(tokens.viewer, 'GET', `/api/apps/${apps.web.id}/env/API_KEY/reveal`),
      await as(tokens.viewer, 'GET', `/api/apps/${apps.web.id}/logs/stream?tail=1`),
      await as(tokens.viewer, 'POST', '/api/invitations', { role: 'admin' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(refused[0].body.error).toBe('the viewer role may not do this (deploy)');
  });

  it('the owner reveals the rotated secret and deploys it', async () => {
    const reveal = await t.api('GET', `/api/apps/${apps.web.id}/env/API_KEY/reveal`);
    expect(reveal).toMatchObject({ status: 200, body: { key: 'API_KEY', value: SECRET_2 } });
    const d = await finished(await requestImageDeploy(t, apps.web.id, WEB_V2));
    expect(d).toMatchObject({ status: 'success', env_diff: { added: ['FEATURE_FLAGS'], changed: ['API_KEY'] } });
    await serving(apps.web.port, 'svc-test web v2');
    expect((await t.api('GET', `/api/apps/${apps.web.id}`)).body.config_changed).toBe(false);
  });

  it('the audit log names who changed what, with field names and never a value; refusals are not recorded', async () => {
    const rows = (await t.api('GET', '/api/audit?limit=500')).body as any[];
    const text = JSON.stringify(rows);
    for (const value of [SECRET_1, SECRET_2, DEV_PASSWORD, VIEWER_PASSWORD, tokens.developer, tokens.viewer]) expect(text).not.toContain(value);
    const by = (user: string) => rows.filter((r) => r.username === user).map((r) => `${r.action} -> ${r.target}`);
    expect(by('dana')).toEqual(
      expect.arrayContaining([
        'POST /api/apps/:appID/deploys -> web',
        'POST /api/apps/:appID/deploys/rollback -> web',
      ]),
    );
    expect(rows.find((r) => r.username === 'dana' && r.action === 'POST /api/apps/:appID/deploys')).toMatchObject({ origin: 'cli', fields: ['image_ref'], status: 202 });
    expect(rows.filter((r) => r.username === 'dana' && r.action === 'POST /api/apps/:appID/env').map((r) => r.fields)).toEqual([
      ['key', 'value', 'is_secret'],
      ['key', 'value'],
    ]);
    // Nothing the developer or the viewer was refused left a line.
    expect(rows.filter((r) => r.username === 'dana' && String(r.target).startsWith('api'))).toEqual([]);
    expect(rows.filter((r) => r.username === 'victor').map((r) => r.action)).toEqual(['POST /api/tokens']);
    expect(by('admin')).toEqual(expect.arrayContaining(['POST /api/invitations -> null', 'GET /api/apps/:appID/env/:key/reveal -> web API_KEY']));
    const filtered = (await t.api('GET', '/api/audit?user=dana&action=rollback')).body as any[];
    expect(filtered).toHaveLength(1);
  });

  // Issue 35 item 4: a variable set through the API is recorded with its name, as docs/api.md promises.
  it('the audit log names each variable set through the API', async () => {
    const rows = (await t.api('GET', '/api/audit?action=/env&limit=500')).body as any[];
    const sets = rows.filter((r) => r.action === 'POST /api/apps/:appID/env').map((r) => `${r.username} ${r.target}`);
    expect(sets).toEqual(['dana web API_KEY', 'dana web FEATURE_FLAGS', 'admin web API_KEY']);
  });
});
