// THE table-driven permission test (docs/api.md "Teams"): every route the real server registers (REST and
// UI) has a rule, and is called as every role and every token scope; the answer must match the table.
// A route added without a rule fails here: add its line to src/auth/permissions.ts.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decide, ROLE_ACTIONS, RULES, ruleFor, type Action, type Principal } from '../../../src/auth/permissions.js';
import { createApiToken } from '../../../src/store/tokens.js';
import { isMiddleware } from '../../../src/http/route-match.js';
import { createSession } from '../../../src/store/sessions.js';
import { users, type Role } from '../../../src/store/schema/index.js';
import { createTestApi, type TestApi } from '../../support/api.js';

const SECRET = 'Sup3r-s3cret-value-9f8e';
const CSRF_COOKIE = 'teamscsrfcookie0123456789';

/** Every registered endpoint of the real server (not the wildcard middlewares). */
function endpoints(t: TestApi): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const r of t.app.routes) if (!isMiddleware(r)) seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...seen.values()];
}

interface World {
  t: TestApi;
  web: number;
  other: number;
  deploy: number;
  service: number;
  who: Record<string, { principal: Principal; cookie?: string; token?: string }>;
}

/** Two apps (web, api), a deploy of web, a secret of web, a service; one account per role, and tokens. */
async function world(): Promise<World> {
  const t = createTestApi();
  const { cookie: ownerCookie, user: owner } = await t.login('olivia', 'owner');
  const web = (await t.request('POST', '/api/apps', { name: 'web', fallback_port: 8080 })).body.id;
  const other = (await t.request('POST', '/api/apps', { name: 'api', fallback_port: 8081 })).body.id;
  expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'DB_PASSWORD', value: SECRET, is_secret: true })).status).toBe(201);
  const deploy = (await t.request('POST', `/api/apps/${web}/deploys`, { image_ref: 'nginx:1' })).body.id;
  const service = (await t.request('POST', '/api/services', { name: 'db', type: 'postgres' })).body.id;
  const seed = (username: string, role: Role, apps: string[] | null = null) => {
    const row = t.db.insert(users).values({ username, passwordHash: 'x', role, apps }).returning().get();
    return { id: row.id, cookie: createSession(t.db, row.id, t.clock.now()) };
  };
  const admin = seed('ada', 'admin');
  const dev = seed('dev', 'developer', ['web']);
  const viewer = seed('vic', 'viewer');
  const token = (userId: number, scopes: string[]) => createApiToken(t.db, userId, { name: scopes.join(' '), scopes, expiresAt: null }, t.clock.now()).token;
  const who: World['who'] = {
    owner: { principal: { role: 'owner', apps: null }, cookie: ownerCookie },
    admin: { principal: { role: 'admin', apps: null }, cookie: admin.cookie },
    developer: { principal: { role: 'developer', apps: ['web'] }, cookie: dev.cookie },
    viewer: { principal: { role: 'viewer', apps: null }, cookie: viewer.cookie },
    'token read': { principal: { role: 'owner', apps: null, scopes: ['read'] }, token: token(owner.id, ['read']) },
    'token deploy:web': { principal: { role: 'owner', apps: null, scopes: ['deploy:web'] }, token: token(owner.id, ['deploy:web']) },
    'token admin (developer)': { principal: { role: 'developer', apps: ['web'], scopes: ['admin'] }, token: token(dev.id, ['admin']) },
    'token admin (viewer)': { principal: { role: 'viewer', apps: null, scopes: ['admin'] }, token: token(viewer.id, ['admin']) },
  };
  return { t, web, other, deploy, service, who };
}

/** A concrete URL for a route pattern, every id pointing at web's things. */
function urlOf(w: World, path: string): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    if (name === 'appID') return String(w.web);
    if (name === 'deployID') return String(w.deploy);
    if (name === 'serviceID') return String(w.service);
    if (name === 'key') return 'DB_PASSWORD';
    if (name === 'file') return 'app.js';
    if (name === 'name') return 'web';
    if (name === 'token') return 'not-a-token';
    if (name === 'id') return String(path.startsWith('/apps') || path.startsWith('/api/apps') ? w.web : path.startsWith('/deploys') ? w.deploy : path.includes('services') ? w.service : 999);
    return '1';
  });
}

const csrfToken = (t: TestApi) => {
  const key = createHmac('sha256', t.config.encryptionKey).update('svc-ui-csrf-v1').digest();
  return createHmac('sha256', key).update(CSRF_COOKIE).digest('base64url');
};

/** Sends one request as `as`; streams are cancelled once their headers arrive. */
async function call(w: World, method: string, path: string, as: World['who'][string]): Promise<{ status: number; text: string }> {
  const api = path.startsWith('/api/');
  const headers: Record<string, string> = { 'x-forwarded-for': '127.0.0.1' };
  let body: string | undefined;
  if (as.token) headers.authorization = `Bearer ${as.token}`;
  else headers.cookie = `session=${as.cookie}; csrf=${CSRF_COOKIE}`;
  if (method !== 'GET') {
    if (api) {
      headers['content-type'] = 'application/json';
      body = '{}';
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = `_csrf=${encodeURIComponent(csrfToken(w.t))}`;
    }
  }
  const res = await Promise.race([
    w.t.app.request(urlOf(w, path), { method, headers, body }),
    new Promise<'slow'>((resolve) => setTimeout(() => resolve('slow'), 3000)),
  ]);
  if (res === 'slow') return { status: 0, text: '' }; // the handler is running: the middleware let it through
  if (res.headers.get('content-type')?.includes('event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '' };
  }
  return { status: res.status, text: await res.text() };
}

/** A refusal by the permission middleware (not a CSRF check or a handler's own 403). */
const REFUSED = /may not do this|limited to the apps|do not allow this|no permission rule/;
const refused = (r: { status: number; text: string }) => r.status === 403 && REFUSED.test(r.text);

/** Least rights first, so an owner's DELETE comes after everyone else has tried the route. */
const ORDER = ['viewer', 'token read', 'token deploy:web', 'token admin (viewer)', 'developer', 'token admin (developer)', 'admin', 'owner'];

describe('the permission table', () => {
  it('has a rule for every route the server registers, and no rule for a route that does not exist', () => {
    const t = createTestApi();
    const routes = endpoints(t);
    const missing = routes.filter((r) => !ruleFor(r.method, r.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing, 'routes without a rule: add them to src/auth/permissions.ts').toEqual([]);
    const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
    expect(Object.keys(RULES).filter((k) => !registered.has(k))).toEqual([]);
  });

  // Every route times every role and scope through the whole app (265 routes): 100-160 s on 2 busy cores.
  it('every route answers every role and token scope as the table says', { timeout: 360_000 }, async () => {
    const routes = endpoints(createTestApi());
    const mismatches: string[] = [];
    const reads = await world(); // reads change nothing: they share one world; each write gets a fresh one
    for (const route of routes) {
      const rule = ruleFor(route.method, route.path)!;
      if (rule.action === 'public') continue;
      const w = route.method === 'GET' ? reads : await world();
      for (const name of ORDER) {
        const as = w.who[name];
        if (as.token && !route.path.startsWith('/api/')) continue; // bearer tokens are for the REST API only
        const appName = rule.app ? 'web' : undefined;
        const expected = decide(as.principal, rule.action, appName).ok;
        const got = await call(w, route.method, route.path, as);
        if (expected === refused(got) || (expected && got.status === 401)) {
          mismatches.push(`${route.method} ${route.path} as ${name}: expected ${expected ? 'allowed' : 'refused'}, got ${got.status} ${got.text.slice(0, 120)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('a route without a rule is refused, whoever asks (fail closed)', async () => {
    const t = createTestApi();
    await t.login('olivia', 'owner');
    t.app.get('/api/brand-new', (c) => c.json({ ok: true }));
    t.app.get('/brand-new-page', (c) => c.text('hello'));
    t.app.all('/api/any-method', (c) => c.json({ ok: true }));
    expect((await t.request('POST', '/api/any-method', {})).status).toBe(403);
    const api = await t.request('GET', '/api/brand-new');
    expect(api.status).toBe(403);
    expect(api.body.code).toBe('no_rule');
    expect((await t.request('GET', '/brand-new-page', undefined, { contentType: null })).status).toBe(403);
  });

  it('says what the issue says each role may do', () => {
    const may = (role: Role, action: Action) => ROLE_ACTIONS[role].has(action);
    expect(may('viewer', 'read') && !may('viewer', 'reveal') && !may('viewer', 'logs') && !may('viewer', 'deploy') && !may('viewer', 'configure')).toBe(true);
    expect(may('developer', 'deploy') && may('developer', 'configure') && may('developer', 'logs') && !may('developer', 'manage') && !may('developer', 'users')).toBe(true);
    // Issue 35: a developer deploys and replaces secrets but never reads one back; admins and owners reveal.
    expect(!may('developer', 'reveal') && may('admin', 'reveal') && may('owner', 'reveal')).toBe(true);
    expect(may('admin', 'manage') && may('admin', 'users') && !may('admin', 'owner')).toBe(true);
    expect([...ROLE_ACTIONS.owner].length).toBe(10);
    expect(decide({ role: 'developer', apps: ['web'] }, 'deploy', 'api').ok).toBe(false);
    expect(decide({ role: 'developer', apps: ['web'] }, 'deploy', 'web').ok).toBe(true);
    expect(decide({ role: 'developer', apps: null, scopes: ['admin'] }, 'manage', undefined).ok).toBe(false);
  });
});

describe('what a viewer and a deploy token get', () => {
  it('a viewer or a developer never sees a secret value or a credential, on any page or endpoint', { timeout: 240_000 }, async () => {
    const w = await world();
    const creds = await w.t.request('GET', `/api/services/${w.service}/credentials`);
    expect(creds.status).toBe(200);
    const password = String(creds.body.password ?? Object.values(creds.body).find((v) => typeof v === 'string' && v.length >= 16));
    expect(password.length).toBeGreaterThan(8);
    for (const route of endpoints(w.t)) {
      if (route.method !== 'GET') continue;
      for (const name of ['viewer', 'token read', 'developer', 'token admin (developer)']) {
        const got = await call(w, 'GET', route.path, w.who[name]);
        expect(got.text, `${route.path} as ${name}`).not.toContain(SECRET);
        expect(got.text, `${route.path} as ${name}`).not.toContain(password);
      }
    }
    // The one that would show it refuses.
    expect((await call(w, 'GET', '/api/apps/:appID/env/:key/reveal', w.who.viewer)).status).toBe(403);
    expect((await call(w, 'POST', '/apps/:id/env/:key/reveal', w.who.viewer)).status).toBe(403);
    for (const name of ['developer', 'token admin (developer)']) {
      expect((await call(w, 'GET', '/api/apps/:appID/env/:key/reveal', w.who[name])).status, name).toBe(403);
      expect((await call(w, 'GET', '/api/services/:id/credentials', w.who[name])).status, name).toBe(403);
    }
    expect((await call(w, 'POST', '/apps/:id/env/:key/reveal', w.who.developer)).status).toBe(403);
    expect((await call(w, 'POST', '/services/:id/credentials', w.who.developer)).status).toBe(403);
  });

  it('a deploy:web token deploys web, follows its deploy, and gets 403 everywhere else', async () => {
    const w = await world();
    const token = w.who['token deploy:web'].token!;
    const deployed = await w.t.request('POST', `/api/apps/${w.web}/deploys`, { image_ref: 'nginx:2' }, { token });
    expect(deployed.status).toBe(202);
    expect((await w.t.request('GET', `/api/deploys/${deployed.body.id}`, undefined, { token })).status).toBe(200);
    expect((await w.t.request('GET', '/api/app-names/web', undefined, { token })).body).toEqual({ id: w.web, name: 'web' });
    expect((await w.t.request('GET', '/api/app-names/api', undefined, { token })).status).toBe(403);
    expect((await w.t.request('POST', `/api/apps/${w.web}/deploys/rollback`, undefined, { token })).status).not.toBe(403);
    for (const [method, path] of [
      ['POST', `/api/apps/${w.other}/deploys`],
      ['GET', `/api/apps`],
      ['GET', `/api/apps/${w.web}/env`],
      ['POST', `/api/apps/${w.web}/env`],
      ['GET', `/api/auth/me`],
      ['POST', `/api/tokens`],
      ['GET', `/api/services`],
    ] as const) {
      const res = await w.t.request(method, path, method === 'POST' ? { image_ref: 'nginx:2' } : undefined, { token });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
  });
});
