// Service links end to end: the app container sees exactly the injected variables, with and without an
// alias, from the next deploy on; an unlink removes them at the next deploy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_ENV } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon;

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  t = await startTestDaemon('links', serviceImageEnv());
});
afterAll(async () => {
  await t?.close();
});

async function service(name: string, type: string) {
  const res = await t.api('POST', '/api/services', { name, type });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return waitFor(
    async () => {
      const s = (await t.api('GET', `/api/services/${res.body.id}`)).body;
      if (s.status === 'error') throw new Error(s.error);
      return s.status === 'active' ? s : undefined;
    },
    { timeoutMs: 60_000, what: `${name} active` },
  );
}

async function deployAndReadEnv(appId: number, port: number): Promise<Record<string, string>> {
  const d = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: WEB_ENV });
  expect(d.status).toBe(202);
  const done = await waitFor(
    async () => {
      const r = (await t.api('GET', `/api/deploys/${d.body.id}`)).body;
      return ['success', 'failed', 'auto_rollback'].includes(r.status) ? r : undefined;
    },
    { timeoutMs: 45_000, what: 'deploy' },
  );
  expect(done.status).toBe('success');
  const text = await waitFor(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/cgi-bin/env`, { signal: AbortSignal.timeout(5_000) });
    const body = await res.text();
    return res.status === 200 ? body : undefined;
  });
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('service links', () => {
  it('injects postgres with an alias and redis without one, then removes them after unlink', async () => {
    const [pg, cache] = await Promise.all([service('links-pg', 'postgres'), service('links-cache', 'redis')]);
    const port = await freePort();
    const app = (await t.api('POST', '/api/apps', { name: 'linked', internal_port: 3000, access_mode: 'port', fallback_port: port })).body;

    const base = await deployAndReadEnv(app.id, port);
    expect(Object.keys(base).filter((k) => /^(DB|CACHE)_/.test(k))).toEqual([]);

    const l1 = await t.api('POST', `/api/apps/${app.id}/services`, { service_id: pg.id, alias: 'DB' });
    expect(l1.status).toBe(201);
    expect(l1.body.env_keys).toEqual(['DB_HOST', 'DB_PORT', 'DB_DB', 'DB_USER', 'DB_PASSWORD']);
    expect((await t.api('POST', `/api/apps/${app.id}/services`, { service_id: cache.id })).status).toBe(201);
    expect((await t.api('GET', `/api/apps/${app.id}`)).body.config_changed).toBe(true);

    const creds = (await t.api('GET', `/api/services/${pg.id}/credentials`)).body;
    const cacheCreds = (await t.api('GET', `/api/services/${cache.id}/credentials`)).body;
    const env = await deployAndReadEnv(app.id, port);
    expect(env).toMatchObject({
      DB_HOST: `${t.instance}-svc-links-pg`,
      DB_PORT: '5432',
      DB_DB: creds.database,
      DB_USER: creds.user,
      DB_PASSWORD: creds.password,
      CACHE_HOST: `${t.instance}-svc-links-cache`,
      CACHE_PORT: '6379',
      CACHE_PASSWORD: cacheCreds.password,
    });
    expect(Object.keys(env).filter((k) => k.startsWith('SQLA_'))).toEqual([]);
    expect((await t.api('GET', `/api/apps/${app.id}`)).body.config_changed).toBe(false);

    expect((await t.api('DELETE', `/api/apps/${app.id}/services/${pg.id}`)).status).toBe(204);
    const after = await deployAndReadEnv(app.id, port);
    expect(Object.keys(after).filter((k) => k.startsWith('DB_'))).toEqual([]);
    expect(after.CACHE_HOST).toBe(`${t.instance}-svc-links-cache`);
  });
});
