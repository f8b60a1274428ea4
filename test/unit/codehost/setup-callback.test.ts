// The manifest flow end to end against the local code host (test/support/codehost-server.ts): state,
// code exchange, credentials written to .env and the key file (mode 600), live at once (a delivery signed
// with the new secret is accepted without a restart), nothing secret in a response or the log; then the
// app JWT, cached installation tokens and the debug endpoint, all verified by the fake platform.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readEnvFile } from '../../../src/config.js';
import { createCodehostClient } from '../../../src/codehost/client.js';
import { credentialsHolder } from '../../../src/codehost/credentials.js';
import { installationTokenFor } from '../../../src/codehost/tokens.js';
import { signBody } from '../../../src/codehost/signature.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { startFakeCodehost, type FakeCodehost } from '../../support/codehost-server.js';

let host: FakeCodehost;
let dir: string;
let t: TestApi;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => {
  await host.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-test-manifest-'));
  await writeFile(join(dir, '.env'), 'SVC_PORT=3000\nSVC_CODEHOST_WEBHOOK_SECRET=old-secret\n');
  t = createTestApi({
    env: { SVC_DATA_DIR: dir, SVC_CODEHOST_API_URL: host.url, SVC_CODEHOST_WEBHOOK_SECRET: 'old-secret', SVC_DEBUG_ENDPOINTS: 'true', SVC_PUBLIC_URL: 'http://svc.lan:3000' },
    envFile: join(dir, '.env'),
  });
  return () => rm(dir, { recursive: true, force: true });
});

const stateOf = async () => new URL((await t.request('GET', '/api/codehost/manifest')).body.post_url).searchParams.get('state')!;
const callback = (q: string, o: { cookie?: string } = {}) => t.request('GET', `/api/codehost/setup-callback?${q}`, undefined, o);
const ping = (secret: string) =>
  t.request('POST', '/api/webhooks/codehost', undefined, {
    raw: '{"zen":"hi"}',
    cookie: 'none',
    headers: { 'x-github-event': 'ping', 'x-github-delivery': `p-${Math.random()}`, 'x-hub-signature-256': signBody(secret, '{"zen":"hi"}') },
  });

describe('setup callback', () => {
  it('exchanges the code, writes .env and the key file (600), and the new webhook secret works at once', async () => {
    await t.login();
    expect((await ping(host.app.webhook_secret)).status).toBe(401);
    const state = await stateOf();
    const res = await callback(`code=${host.code}&state=${state}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/settings?codehost=created');

    const env = readEnvFile(join(dir, '.env'));
    expect(env).toMatchObject({
      SVC_PORT: '3000',
      SVC_CODEHOST_APP_ID: '4242',
      SVC_CODEHOST_APP_SLUG: 'svc-test-app',
      SVC_CODEHOST_APP_CLIENT_ID: host.app.client_id,
      SVC_CODEHOST_APP_CLIENT_SECRET: host.app.client_secret,
      SVC_CODEHOST_WEBHOOK_SECRET: host.app.webhook_secret,
      SVC_CODEHOST_APP_PRIVATE_KEY: join(dir, 'codehost-app.pem'),
    });
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'codehost-app.pem'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'codehost-app.pem'), 'utf8')).toBe(host.app.pem);

    expect((await ping(host.app.webhook_secret)).status).toBe(200);
    expect((await ping('old-secret')).status).toBe(401);
    // No secret in any log line.
    for (const secret of [host.app.client_secret, host.app.webhook_secret, 'PRIVATE KEY']) {
      expect(t.logs.join('\n')).not.toContain(secret);
    }

    // The state was single use.
    expect((await callback(`code=${host.code}&state=${state}`)).body.code).toBe('invalid_state');
  });

  it('refuses an unknown or expired state with 400 and writes nothing', async () => {
    await t.login();
    const before = await readFile(join(dir, '.env'), 'utf8');
    expect((await callback(`code=${host.code}&state=nosuchstate`)).body).toMatchObject({ code: 'invalid_state' });
    const state = await stateOf();
    t.clock.advance(3600_001);
    const res = await callback(`code=${host.code}&state=${state}`);
    expect(res.status).toBe(400);
    expect(await readFile(join(dir, '.env'), 'utf8')).toBe(before);
  });

  it('needs the session of the user who started the flow', async () => {
    await t.login();
    const state = await stateOf();
    const anonymous = await callback(`code=${host.code}&state=${state}`, { cookie: 'none' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toMatch(/^\/login\?next=%2Fapi%2Fcodehost%2Fsetup-callback/);
    await t.login('someone-else');
    expect((await callback(`code=${host.code}&state=${state}`)).body.code).toBe('invalid_state');
  });

  it('a failed exchange writes nothing and redirects to /settings with the reason', async () => {
    await t.login();
    const before = await readFile(join(dir, '.env'), 'utf8');
    const res = await callback(`code=wrongcode&state=${await stateOf()}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^\/settings\?codehost_error=.*404/);
    expect(await readFile(join(dir, '.env'), 'utf8')).toBe(before);
    expect((await ping('old-secret')).status).toBe(200);
  });
});

describe('app JWT, installation tokens and the debug endpoint', () => {
  it('debug reports for real, with JWTs and tokens the platform accepts', async () => {
    await t.login();
    expect((await t.request('GET', '/api/codehost/debug')).body).toMatchObject({ app_configured: false, installations: 0 });
    await callback(`code=${host.code}&state=${await stateOf()}`);
    const res = await t.request('GET', '/api/codehost/debug');
    expect(res.body).toEqual({
      app_configured: true,
      private_key_readable: true,
      installations: 1,
      repositories: [{ installation_id: 7, ok: true, count: 2, error: null }],
    });
    expect(host.jwtErrors).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain(host.app.client_secret);
  });

  it('is 404 unless SVC_DEBUG_ENDPOINTS=true', async () => {
    const off = createTestApi();
    await off.login();
    expect((await off.request('GET', '/api/codehost/debug')).status).toBe(404);
  });

  it('caches installation tokens and gives them only to repositories on the code host', async () => {
    await t.login();
    await callback(`code=${host.code}&state=${await stateOf()}`);
    const creds = credentialsHolder({ appId: '4242', privateKeyPath: join(dir, 'codehost-app.pem') });
    const client = createCodehostClient({ apiUrl: host.url, creds });
    const tokenFor = installationTokenFor(client, creds, 'https://github.com');
    const tokenCalls = () => host.calls.filter((c) => c.path === '/app/installations/7/access_tokens').length;
    const before = tokenCalls();
    const a = await tokenFor('https://github.com/acme/site.git');
    const b = await tokenFor('https://github.com/Acme/site');
    expect(a).toMatch(/^ghs_/);
    expect(b).toBe(a);
    expect(tokenCalls() - before).toBe(1);
    expect(await tokenFor('https://github.com/other/repo')).toBeUndefined();
    expect(await tokenFor('https://gitlab.com/acme/site')).toBeUndefined();
    expect(await tokenFor('file:///srv/git/acme/site.git')).toBeUndefined();
    expect(host.jwtErrors).toEqual([]);
  });
});
