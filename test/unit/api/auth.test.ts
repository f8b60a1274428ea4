import { describe, it, expect, beforeEach } from 'vitest';
import { sessions, apiTokens, users } from '../../../src/store/schema/index.js';
import { sha256Hex } from '../../../src/crypto.js';
import { createTestApi, SEEDED_PASSWORD, type TestApi } from '../../support/api.js';

let t: TestApi;
beforeEach(() => {
  t = createTestApi();
});

const cookieToken = (setCookie: string | null) => /session=([^;]*)/.exec(setCookie ?? '')?.[1];

describe('setup and login', () => {
  it('status says setup is required until the first user exists; setup answers 201, the user and a session cookie', async () => {
    expect((await t.request('GET', '/api/auth/status')).body).toEqual({ setup_required: true });
    const res = await t.request('POST', '/api/auth/setup', { username: 'admin', password: 'long enough pw' });
    expect(res.status).toBe(201);
    // The first user is an owner (docs/api.md "Teams").
    expect(res.body).toEqual({ user: { id: 1, username: 'admin', role: 'owner', apps: null, totp_enabled: false, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) } });
    expect(res.headers.get('set-cookie')).toMatch(/^session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/$/);
    expect((await t.request('GET', '/api/auth/status')).body).toEqual({ setup_required: false });

    const me = await t.request('GET', '/api/auth/me', undefined, { cookie: cookieToken(res.headers.get('set-cookie')) });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: res.body.user });

    // The password is stored as an scrypt hash with its parameters, never in clear.
    const row = t.db.select().from(users).get()!;
    expect(row.passwordHash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(row.passwordHash).not.toContain('long enough pw');
  });

  it('setup is refused with 409 once a user exists, and 400 for a short password or bad username', async () => {
    expect((await t.request('POST', '/api/auth/setup', { username: 'admin', password: 'short' })).status).toBe(400);
    const bad = await t.request('POST', '/api/auth/setup', { username: 'has space', password: 'long enough pw' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    expect(bad.body.details.issues[0].path).toBe('username');
    expect((await t.request('POST', '/api/auth/setup', { username: 'admin', password: 'long enough pw' })).status).toBe(201);
    const again = await t.request('POST', '/api/auth/setup', { username: 'other', password: 'long enough pw' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
  });

  it('login answers 200 with a new session; wrong password or unknown user 401 with no cookie', async () => {
    await t.login('admin');
    const ok = await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' });
    expect(ok.status).toBe(200);
    expect(ok.body.user.username).toBe('admin');
    const token = cookieToken(ok.headers.get('set-cookie'))!;
    // Only the token's SHA-256 is stored.
    expect(t.db.select().from(sessions).all().map((s) => s.tokenHash)).toContain(sha256Hex(token));
    expect(JSON.stringify(t.db.select().from(sessions).all())).not.toContain(token);

    for (const body of [{ username: 'admin', password: 'wrong password' }, { username: 'nobody', password: SEEDED_PASSWORD }]) {
      const res = await t.request('POST', '/api/auth/login', body, { cookie: 'none' });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthenticated');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    expect((await t.request('POST', '/api/auth/login', { username: 'admin' }, { cookie: 'none' })).status).toBe(400);
    expect((await t.request('POST', '/api/auth/login', undefined, { raw: '{not json', cookie: 'none' })).status).toBe(400);
  });

  it('adds Secure to the cookie over HTTPS (forwarded proto or an https public URL)', async () => {
    await t.login();
    const viaProxy = await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none', headers: { 'x-forwarded-proto': 'https' } });
    expect(viaProxy.headers.get('set-cookie')).toMatch(/; Secure$/);
    const https = createTestApi({ env: { SVC_PUBLIC_URL: 'https://svc.example.com' } });
    await https.login();
    const res = await https.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' });
    expect(res.headers.get('set-cookie')).toBe(`session=${cookieToken(res.headers.get('set-cookie'))}; HttpOnly; SameSite=Lax; Path=/; Secure`);
  });

  it('after 10 failures from one address every attempt answers 429 with Retry-After, until the window frees up', async () => {
    await t.login();
    for (let i = 0; i < 10; i++) {
      t.clock.advance(1000);
      expect((await t.request('POST', '/api/auth/login', { username: 'admin', password: `wrong ${i}` }, { cookie: 'none' })).status).toBe(401);
    }
    const limited = await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    // The first failure was 9 s before the last: it leaves the 15-minute window 15 min - 9 s from now.
    expect(limited.headers.get('retry-after')).toBe(String(15 * 60 - 9));
    t.clock.advance((15 * 60 - 10) * 1000);
    expect((await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' })).status).toBe(429);
    t.clock.advance(1000);
    expect((await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' })).status).toBe(200);
  });
});

describe('sessions', () => {
  it('logout answers 204 and revokes the session server-side', async () => {
    const { cookie } = await t.login();
    const res = await t.request('POST', '/api/auth/logout');
    expect(res.status).toBe(204);
    expect(res.headers.get('set-cookie')).toMatch(/^session=; HttpOnly; SameSite=Lax; Path=\/; Max-Age=0/);
    expect(t.db.select().from(sessions).all()).toEqual([]);
    expect((await t.request('GET', '/api/auth/me', undefined, { cookie })).status).toBe(401);
  });

  it('expires after 7 days idle; use refreshes last_seen_at at most once a minute', async () => {
    await t.login();
    const seen = () => t.db.select().from(sessions).get()!.lastSeenAt;
    const first = seen();
    t.clock.advance(30_000);
    expect((await t.request('GET', '/api/auth/me')).status).toBe(200);
    expect(seen()).toBe(first); // less than a minute: no write
    t.clock.advance(31_000);
    expect((await t.request('GET', '/api/auth/me')).status).toBe(200);
    expect(seen()).toBe('2026-01-01T00:01:01Z');
    t.clock.advance(7 * 24 * 3600 * 1000 - 1000);
    expect((await t.request('GET', '/api/auth/me')).status).toBe(200); // activity keeps it alive
    t.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const expired = await t.request('GET', '/api/auth/me');
    expect(expired.status).toBe(401);
    expect(t.db.select().from(sessions).all()).toEqual([]);
  });
});

describe('the auth wall', () => {
  it('answers 401 unauthenticated without credentials, with a bad cookie or a bad token; public routes stay open', async () => {
    for (const [method, path] of [['GET', '/api/apps'], ['GET', '/api/auth/me'], ['POST', '/api/auth/logout'], ['GET', '/api/tokens'], ['GET', '/api/services'], ['GET', '/api/nothing-here']]) {
      const res = await t.request(method, path);
      expect(res.status, path).toBe(401);
      expect(res.body.code).toBe('unauthenticated');
    }
    expect((await t.request('GET', '/api/apps', undefined, { cookie: 'forged' })).status).toBe(401);
    expect((await t.request('GET', '/api/apps', undefined, { token: 'svc_forged' })).status).toBe(401);
    expect((await t.request('GET', '/api/apps', undefined, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await t.request('GET', '/api/auth/status')).status).toBe(200);
    // Public prefixes pass the wall (no route there yet: 404, not 401).
    expect((await t.request('POST', '/api/webhooks/codehost', {})).status).not.toBe(401);
    expect((await t.request('GET', '/api/codehost/setup-callback')).status).not.toBe(401);
    expect((await t.request('GET', '/healthz')).status).toBe(200);
  });

  it('CSRF: a cookie-authenticated state change needs JSON or a same-origin Origin; reads and bearer requests need neither', async () => {
    await t.login();
    const form = { contentType: 'application/x-www-form-urlencoded', raw: 'name=web' };
    const refused = await t.request('POST', '/api/tokens', undefined, form);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('csrf');
    expect((await t.request('POST', '/api/tokens', undefined, { ...form, headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect((await t.request('DELETE', '/api/tokens/1', undefined, { contentType: null })).status).toBe(403);
    // Same origin as the request itself (scheme + Host): allowed (then the body is judged: 400).
    expect((await t.request('POST', '/api/tokens', undefined, { ...form, headers: { origin: 'http://svc.local:3000', host: 'svc.local:3000' } })).status).toBe(400);
    expect((await t.request('GET', '/api/tokens', undefined, { contentType: null })).status).toBe(200);
    // SVC_PUBLIC_URL's origin is allowed too.
    const pub = createTestApi({ env: { SVC_PUBLIC_URL: 'https://svc.example.com' } });
    await pub.login();
    expect((await pub.request('DELETE', '/api/tokens/9', undefined, { contentType: null, headers: { origin: 'https://svc.example.com' } })).status).toBe(404);
    // Login itself gets the rule, so another site cannot log a visitor in.
    expect((await t.request('POST', '/api/auth/login', undefined, { ...form, cookie: 'none' })).status).toBe(403);
    // A bearer token needs no CSRF proof.
    const created = await t.request('POST', '/api/tokens', { name: 'ci' });
    expect((await t.request('DELETE', `/api/tokens/${created.body.id}`, undefined, { token: created.body.token, contentType: null })).status).toBe(204);
  });
});

describe('API tokens', () => {
  it('creates (201, token once, stored hashed), lists without the token, authenticates as Bearer, deletes', async () => {
    const { user } = await t.login();
    const created = await t.request('POST', '/api/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 1, name: 'ci', scopes: ['admin'], expires_at: null, token: expect.stringMatching(/^svc_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String), last_used_at: null });
    const token = created.body.token as string;
    expect(t.db.select().from(apiTokens).get()!.tokenHash).toBe(sha256Hex(token));

    const list = await t.request('GET', '/api/tokens');
    expect(list.body).toEqual([{ id: 1, name: 'ci', scopes: ['admin'], expires_at: null, created_at: created.body.created_at, last_used_at: null }]);
    expect(JSON.stringify(list.body)).not.toContain(token);

    const me = await t.request('GET', '/api/auth/me', undefined, { token, cookie: 'none' });
    expect(me.body).toEqual({ user });
    expect((await t.request('GET', '/api/tokens')).body[0].last_used_at).toBe('2026-01-01T00:00:00Z');

    expect((await t.request('DELETE', '/api/tokens/1')).status).toBe(204);
    expect((await t.request('GET', '/api/auth/me', undefined, { token, cookie: 'none' })).status).toBe(401);
    expect((await t.request('DELETE', '/api/tokens/1')).status).toBe(404);
    expect((await t.request('DELETE', '/api/tokens/abc')).status).toBe(404);
    expect((await t.request('POST', '/api/tokens', { name: '' })).status).toBe(400);
    expect((await t.request('POST', '/api/tokens', { name: 'x', extra: 1 })).status).toBe(400);
  });

  it('a bearer request that is wrong is 401 even with a valid cookie (no silent fallback)', async () => {
    await t.login();
    expect((await t.request('GET', '/api/apps', undefined, { token: 'svc_nope' })).status).toBe(401);
  });
});

describe('login limit under concurrency', () => {
  it('parallel wrong guesses cannot exceed the limit while earlier ones are still being verified', async () => {
    await t.login();
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => t.request('POST', '/api/auth/login', { username: 'admin', password: `guess ${i}` }, { cookie: 'none' })),
    );
    expect(results.filter((r) => r.status === 401)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(5);
  });

  it('successful logins do not count', async () => {
    await t.login();
    for (let i = 0; i < 12; i++) {
      expect((await t.request('POST', '/api/auth/login', { username: 'admin', password: SEEDED_PASSWORD }, { cookie: 'none' })).status).toBe(200);
    }
  });
});
