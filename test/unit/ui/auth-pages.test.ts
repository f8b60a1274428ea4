// Setup wizard, login, logout and the session/CSRF rules of the web UI, through the real hono app.
import { describe, expect, it } from 'vitest';
import { createTestApi, SEEDED_PASSWORD } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';

describe('web UI authentication', () => {
  it('sends every page to /setup while no user exists, and the wizard creates the account and logs in', async () => {
    const t = createTestApi();
    const b = formClient(t.app);
    for (const path of ['/', '/apps/new', '/settings', '/login']) {
      const p = await b.get(path);
      expect(p.status, path).toBe(303);
      expect(p.location, path).toBe('/setup');
    }
    const setup = await b.get('/setup');
    expect(setup.status).toBe(200);
    expect(setup.html).toContain('Create account');
    const short = await b.post('/setup', { username: 'admin', password: 'short' });
    expect(short.status).toBe(400);
    expect(roleText(short.html, 'alert')).toMatch(/password: must be at least 10 characters/);
    const created = await b.post('/setup', { username: 'admin', password: 'a long enough password' });
    expect(created.status).toBe(303);
    expect(created.location).toBe('/?m=welcome');
    expect(b.jar.get('session')).toBeTruthy();
    const home = await b.follow(created);
    expect(home.status).toBe(200);
    expect(roleText(home.html, 'status')).toMatch(/Welcome/);
    expect(home.html).toContain('Log out');
    // Once a user exists the wizard is closed.
    expect((await b.get('/setup')).location).toBe('/login');
  });

  it('logs in and out; a wrong password is shown in role="alert"; the session is revoked', async () => {
    const t = createTestApi();
    await t.login('admin');
    const b = formClient(t.app);
    const gate = await b.get('/services');
    expect(gate.location).toBe('/login?next=%2Fservices');
    await b.get('/login?next=/services');
    const wrong = await b.post('/login', { username: 'admin', password: 'nope nope nope' });
    expect(wrong.status).toBe(401);
    expect(roleText(wrong.html, 'alert')).toBe('wrong username or password');
    const ok = await b.post('/login', { username: 'admin', password: SEEDED_PASSWORD, next: '/services' });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/services');
    const session = b.jar.get('session')!;
    expect((await t.request('GET', '/api/auth/me', undefined, { cookie: session })).status).toBe(200);
    await b.get('/');
    const out = await b.post('/logout');
    expect(out.location).toBe('/login?m=logged_out');
    expect((await t.request('GET', '/api/auth/me', undefined, { cookie: session })).status).toBe(401);
    expect((await b.get('/')).location).toBe('/login');
  });

  it('never redirects a login to another site', async () => {
    const t = createTestApi();
    await t.login('admin');
    const b = formClient(t.app);
    await b.get('/login');
    const p = await b.post('/login', { username: 'admin', password: SEEDED_PASSWORD, next: '//evil.example/x' });
    expect(p.location).toBe('/');
  });

  it('refuses a form post without its CSRF token with 403, even from our own Origin', async () => {
    const t = createTestApi();
    const { cookie } = await t.login('admin');
    const b = formClient(t.app);
    b.jar.set('session', cookie);
    await b.get('/');
    const origin = { origin: 'http://localhost' };
    const none = await b.post('/logout', {}, { csrf: false, headers: origin });
    expect(none.status).toBe(403);
    expect(roleText(none.html, 'alert')).toMatch(/form has expired/);
    const forged = await b.post('/logout', {}, { csrf: 'x'.repeat(43), headers: origin });
    expect(forged.status).toBe(403);
    // The login form too (pre-session): a cross-site login is refused.
    const fresh = formClient(t.app);
    expect((await fresh.post('/login', { username: 'admin', password: SEEDED_PASSWORD }, { csrf: false })).status).toBe(403);
    // The session is still valid after the refusals.
    expect((await t.request('GET', '/api/auth/me', undefined, { cookie })).status).toBe(200);
  });

  it('keeps the API as it was: JSON 404 under /api, HTML 404 elsewhere', async () => {
    const t = createTestApi();
    await t.login('admin');
    const api = await t.request('GET', '/api/nothing-here');
    expect(api.status).toBe(404);
    expect(api.body.code).toBe('not_found');
    const b = formClient(t.app);
    const res = await t.app.request('/assets/nothing.css');
    expect(res.status).toBe(404);
    expect((await b.get('/healthz')).status).toBe(200);
  });
});
