// Who reads a secret (issue 35 defect 4, docs/api.md "Teams"): only admins and owners reveal an app's secret
// values and read a service's credentials, through the REST API and the UI alike; a developer sees that a
// secret is set (or empty) and replaces it, never reads it back; a viewer does neither. Each role is asked
// through app.request() on the real server and its one permission middleware.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Role } from '../../../src/store/schema/index.js';
import { createTestApi, type TestApi } from '../../support/api.js';

const SECRET = 'Pr0duction-s3cret-7c1d';
const CSRF = 'rolescsrfcookie0123456789';
const csrf = (t: TestApi) => createHmac('sha256', createHmac('sha256', t.config.encryptionKey).update('svc-ui-csrf-v1').digest()).update(CSRF).digest('base64url');

/** One app `web` with a set secret and an empty one, a Postgres service, and one account per role. */
async function world() {
  const t = createTestApi();
  const { cookie: owner } = await t.login('olivia', 'owner');
  const web = (await t.request('POST', '/api/apps', { name: 'web', fallback_port: 8080 })).body.id as number;
  expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'DB_PASSWORD', value: SECRET, is_secret: true })).status).toBe(201);
  expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'API_KEY', value: '', is_secret: true })).status).toBe(201);
  const service = (await t.request('POST', '/api/services', { name: 'db', type: 'postgres' })).body.id as number;
  const password = (await t.request('GET', `/api/services/${service}/credentials`, undefined, { cookie: owner })).body.password as string;
  expect(password.length).toBeGreaterThan(8);
  const cookies: Record<Role, string> = {
    owner,
    admin: (await t.login('ada', 'admin')).cookie,
    developer: (await t.login('dev', 'developer', ['web'])).cookie,
    viewer: (await t.login('vic', 'viewer')).cookie,
  };
  /** A UI request as `role` (a form post carries the CSRF token). */
  const ui = async (role: Role, method: 'GET' | 'POST', path: string, form = '') => {
    const body = method === 'POST' ? `_csrf=${encodeURIComponent(csrf(t))}${form}` : undefined;
    const headers: Record<string, string> = { cookie: `session=${cookies[role]}; csrf=${CSRF}` };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await t.app.request(path, { method, headers, body });
    return { status: res.status, text: await res.text() };
  };
  return { t, web, service, password, cookies, ui };
}

const READERS: Role[] = ['owner', 'admin'];
const ROLES: Role[] = ['owner', 'admin', 'developer', 'viewer'];

describe('revealing secrets and reading credentials, per role', () => {
  it.each(ROLES)('%s: GET .../env/{key}/reveal and GET /api/services/{id}/credentials', async (role) => {
    const w = await world();
    const reveal = await w.t.request('GET', `/api/apps/${w.web}/env/DB_PASSWORD/reveal`, undefined, { cookie: w.cookies[role] });
    const creds = await w.t.request('GET', `/api/services/${w.service}/credentials`, undefined, { cookie: w.cookies[role] });
    if (READERS.includes(role)) {
      expect(reveal.status).toBe(200);
      expect(reveal.body).toEqual({ key: 'DB_PASSWORD', value: SECRET });
      expect(creds.status).toBe(200);
      expect(creds.body.password).toBe(w.password);
    } else {
      expect(reveal.status).toBe(403);
      expect(reveal.body.error).toBe(`the ${role} role may not do this (reveal)`);
      expect(JSON.stringify(reveal.body)).not.toContain(SECRET);
      expect(creds.status).toBe(403);
      expect(JSON.stringify(creds.body)).not.toContain(w.password);
    }
  });

  it.each(ROLES)('%s: the UI offers Reveal and Show credentials only to whom the routes allow', async (role) => {
    const w = await world();
    const page = await w.ui(role, 'GET', `/apps/${w.web}/env`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(SECRET);
    expect(page.text.includes(`/apps/${w.web}/env/DB_PASSWORD/reveal`)).toBe(READERS.includes(role));
    const revealed = await w.ui(role, 'POST', `/apps/${w.web}/env/DB_PASSWORD/reveal`);
    expect(revealed.status).toBe(READERS.includes(role) ? 200 : 403);
    expect(revealed.text.includes(SECRET)).toBe(READERS.includes(role));

    const service = await w.ui(role, 'GET', `/services/${w.service}`);
    expect(service.status).toBe(200);
    expect(service.text.includes('Show credentials')).toBe(READERS.includes(role));
    const shown = await w.ui(role, 'POST', `/services/${w.service}/credentials`);
    expect(shown.status).toBe(READERS.includes(role) ? 200 : 403);
    expect(shown.text.includes(w.password)).toBe(READERS.includes(role));
  });

  it('a developer sees that a secret is set or empty, replaces it, and still cannot read it back', async () => {
    const w = await world();
    const dev = { cookie: w.cookies.developer };
    const list = (await w.t.request('GET', `/api/apps/${w.web}/env`, undefined, dev)).body as { key: string; value: unknown; is_secret: boolean; empty: boolean }[];
    expect(list.find((v) => v.key === 'DB_PASSWORD')).toMatchObject({ value: null, is_secret: true, empty: false });
    expect(list.find((v) => v.key === 'API_KEY')).toMatchObject({ value: null, is_secret: true, empty: true });
    expect(JSON.stringify(list)).not.toContain(SECRET);

    const replaced = await w.t.request('POST', `/api/apps/${w.web}/env`, { key: 'DB_PASSWORD', value: 'rotated-by-dev-1234' }, dev);
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ key: 'DB_PASSWORD', value: null, is_secret: true, empty: false });
    expect((await w.t.request('GET', `/api/apps/${w.web}/env/DB_PASSWORD/reveal`, undefined, dev)).status).toBe(403);
    expect((await w.t.request('GET', `/api/apps/${w.web}/env/DB_PASSWORD/history`, undefined, dev)).body.every((h: { value: unknown }) => h.value === null)).toBe(true);
    // The UI form replaces it too (a redirect back to the app page).
    expect((await w.ui('developer', 'POST', `/apps/${w.web}/env`, '&key=API_KEY&value=filled-by-dev-5678&is_secret=on')).status).toBe(303);
    // An admin reads what the developer wrote.
    expect((await w.t.request('GET', `/api/apps/${w.web}/env/DB_PASSWORD/reveal`, undefined, { cookie: w.cookies.admin })).body.value).toBe('rotated-by-dev-1234');
    expect((await w.t.request('GET', `/api/apps/${w.web}/env/API_KEY/reveal`, undefined, { cookie: w.cookies.admin })).body.value).toBe('filled-by-dev-5678');
  });
});
