// Teams through the real app and a `:memory:` database (docs/api.md "Teams"): invitations work once and
// expire, a removed user is out on their next request, the owner rules, passwords and sessions, the second
// factor at login (single use, recovery codes once, the login limit kept), token scopes and expiry, the
// audit log from each entry point without values, and the start-up fix-up of older installs.
import { createHmac } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { describe, expect, it } from 'vitest';
import { signBody } from '../../../src/codehost/signature.js';
import { applyManifests } from '../../../src/manifests/apply.js';
import { apiTokens, auditLog, users } from '../../../src/store/schema/index.js';
import { teamsFixup } from '../../../src/store/teams-fixup.js';
import { createApiToken } from '../../../src/store/tokens.js';
import { createTestApi, SEEDED_PASSWORD, type TestApi } from '../../support/api.js';

const cookieOf = (res: { headers: Headers }) => /session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
const codeAt = (secret: string, t: TestApi, offsetMs = 0) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: t.clock.now().getTime() + offsetMs });

async function invite(t: TestApi, body: Record<string, unknown>) {
  const res = await t.request('POST', '/api/invitations', body);
  expect(res.status).toBe(201);
  return res.body as { token: string; path: string; id: number };
}

async function join(t: TestApi, token: string, username: string) {
  return t.request('POST', '/api/invitations/accept', { token, username, password: 'a long password' }, { cookie: 'none' });
}

describe('invitations', () => {
  it('a link works once, gives its role and apps, and expires', async () => {
    const t = createTestApi();
    await t.login('olivia');
    const inv = await invite(t, { role: 'developer', apps: ['web'], expires_in_hours: 2 });
    expect(inv.path).toBe(`/invite/${inv.token}`);
    const joined = await join(t, inv.token, 'dev');
    expect(joined.status).toBe(201);
    expect(joined.body.user).toMatchObject({ username: 'dev', role: 'developer', apps: ['web'] });
    const me = await t.request('GET', '/api/auth/me', undefined, { cookie: cookieOf(joined) });
    expect(me.body.user.username).toBe('dev');
    const again = await join(t, inv.token, 'dev2');
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('invitation_invalid');

    const late = await invite(t, { role: 'viewer', expires_in_hours: 1 });
    t.clock.advance(60 * 60 * 1000 + 1000);
    expect((await join(t, late.token, 'late')).status).toBe(404);
    expect((await t.request('GET', `/invite/${late.token}`, undefined, { cookie: 'none', contentType: null })).status).toBe(404);
    expect((await t.request('GET', '/api/invitations')).body).toEqual([]);
  });

  it('a taken username leaves the link usable; only an owner invites an owner; apps are for developers', async () => {
    const t = createTestApi();
    await t.login('olivia');
    const inv = await invite(t, { role: 'viewer' });
    expect((await join(t, inv.token, 'olivia')).status).toBe(409);
    expect((await join(t, inv.token, 'vic')).status).toBe(201);
    expect((await t.request('POST', '/api/invitations', { role: 'viewer', apps: ['web'] })).status).toBe(400);

    const admin = createTestApi();
    await admin.login('ada', 'admin');
    const refused = await admin.request('POST', '/api/invitations', { role: 'owner' });
    expect(refused.status).toBe(403);
    expect((await admin.request('POST', '/api/invitations', { role: 'admin' })).status).toBe(201);
  });
});

describe('users', () => {
  it('a removed user is out at their next request, session and token alike', async () => {
    const t = createTestApi();
    const { cookie: ownerCookie } = await t.login('olivia');
    const inv = await invite(t, { role: 'developer' });
    const joined = await join(t, inv.token, 'dev');
    const devCookie = cookieOf(joined)!;
    const token = (await t.request('POST', '/api/tokens', { name: 'ci', scopes: ['read'] }, { cookie: devCookie })).body.token;
    expect((await t.request('GET', '/api/apps', undefined, { cookie: devCookie })).status).toBe(200);
    expect((await t.request('GET', '/api/apps', undefined, { token })).status).toBe(200);

    expect((await t.request('DELETE', `/api/users/${joined.body.user.id}`, undefined, { cookie: ownerCookie })).status).toBe(204);
    expect((await t.request('GET', '/api/apps', undefined, { cookie: devCookie })).status).toBe(401);
    expect((await t.request('GET', '/api/apps', undefined, { token })).status).toBe(401);
    expect((await t.request('GET', '/', undefined, { cookie: devCookie, contentType: null })).status).toBe(303);
  });

  it('only an owner changes or removes an owner, and the last owner stays', async () => {
    const t = createTestApi();
    const { user: owner, cookie: ownerCookie } = await t.login('olivia');
    expect((await t.request('DELETE', `/api/users/${owner.id}`)).status).toBe(409);
    expect((await t.request('PATCH', `/api/users/${owner.id}`, { role: 'admin' })).status).toBe(409);
    const { cookie: adminCookie, user: admin } = await t.login('ada', 'admin');
    expect((await t.request('PATCH', `/api/users/${owner.id}`, { role: 'viewer' }, { cookie: adminCookie })).status).toBe(403);
    expect((await t.request('DELETE', `/api/users/${owner.id}`, undefined, { cookie: adminCookie })).status).toBe(403);
    expect((await t.request('PATCH', `/api/users/${admin.id}`, { role: 'owner' }, { cookie: adminCookie })).status).toBe(403);
    const promoted = await t.request('PATCH', `/api/users/${admin.id}`, { role: 'owner' }, { cookie: ownerCookie });
    expect(promoted.body.role).toBe('owner');
    // Two owners now: one may step down.
    expect((await t.request('PATCH', `/api/users/${owner.id}`, { role: 'admin' }, { cookie: ownerCookie })).body.role).toBe('admin');
    const dev = await t.request('PATCH', `/api/users/${owner.id}`, { role: 'developer', apps: ['web'] }, { cookie: adminCookie });
    expect(dev.body).toMatchObject({ role: 'developer', apps: ['web'] });
  });

  it('changing one\'s password needs the current one and ends the other sessions; sessions can be listed and ended', async () => {
    const t = createTestApi();
    await t.login('olivia');
    const other = await t.request('POST', '/api/auth/login', { username: 'olivia', password: SEEDED_PASSWORD }, { cookie: 'none', headers: { 'user-agent': 'laptop' } });
    const otherCookie = cookieOf(other)!;
    const list = await t.request('GET', '/api/account/sessions');
    expect(list.body).toHaveLength(2);
    expect(list.body.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    expect(list.body.find((s: { user_agent: string | null }) => s.user_agent === 'laptop')).toBeTruthy();

    expect((await t.request('POST', '/api/account/password', { current_password: 'wrong', new_password: 'new long password' })).status).toBe(401);
    expect((await t.request('POST', '/api/account/password', { current_password: SEEDED_PASSWORD, new_password: 'short' })).status).toBe(400);
    expect((await t.request('POST', '/api/account/password', { current_password: SEEDED_PASSWORD, new_password: 'new long password' })).status).toBe(204);
    expect((await t.request('GET', '/api/apps', undefined, { cookie: otherCookie })).status).toBe(401);
    expect((await t.request('GET', '/api/apps')).status).toBe(200);
    expect((await t.request('POST', '/api/auth/login', { username: 'olivia', password: 'new long password' }, { cookie: 'none' })).status).toBe(200);

    const mine = (await t.request('GET', '/api/account/sessions')).body as { id: number; current: boolean }[];
    const notCurrent = mine.find((s) => !s.current)!;
    expect((await t.request('DELETE', `/api/account/sessions/${notCurrent.id}`)).status).toBe(204);
    expect((await t.request('DELETE', `/api/account/sessions/${notCurrent.id}`)).status).toBe(404);
  });
});

describe('second factor', () => {
  async function enrol(t: TestApi) {
    const begun = await t.request('POST', '/api/account/totp');
    expect(begun.status).toBe(201);
    expect(begun.body.otpauth_url).toMatch(/^otpauth:\/\/totp\/svc:olivia\?/);
    expect(begun.body.qr_svg).toMatch(/^<svg/);
    expect((await t.request('POST', '/api/account/totp/confirm', { code: '000000' })).status).toBe(400);
    const confirmed = await t.request('POST', '/api/account/totp/confirm', { code: codeAt(begun.body.secret, t) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    return { secret: begun.body.secret as string, codes: confirmed.body.recovery_codes as string[] };
  }
  const login = (t: TestApi, extra: Record<string, string> = {}) =>
    t.request('POST', '/api/auth/login', { username: 'olivia', password: SEEDED_PASSWORD, ...extra }, { cookie: 'none' });

  it('login then needs a code; a code works once; a recovery code works once; it is stored sealed and hashed', async () => {
    const t = createTestApi();
    await t.login('olivia');
    const { secret, codes } = await enrol(t);
    const row = t.db.select().from(users).get()!;
    expect(row.totpSecretSealed).not.toContain(secret);
    expect(JSON.stringify(t.db.$client.prepare('SELECT * FROM recovery_codes').all())).not.toContain(codes[0]);

    const bare = await login(t);
    expect(bare.status).toBe(401);
    expect(bare.body.code).toBe('totp_required');
    expect(cookieOf(bare)).toBeUndefined();
    expect((await login(t, { totp: '123456' })).status).toBe(401);
    t.clock.advance(30_000);
    const code = codeAt(secret, t);
    expect((await login(t, { totp: code })).status).toBe(200);
    expect((await login(t, { totp: code })).status).toBe(401); // replay within its window

    expect((await login(t, { recovery_code: codes[3].toLowerCase() })).status).toBe(200);
    expect((await login(t, { recovery_code: codes[3] })).status).toBe(401);
    expect((await t.request('DELETE', '/api/account/totp', { code: codes[4] })).status).toBe(204);
    expect((await login(t)).status).toBe(200);
  });

  it('keeps the login rate limit: right password with wrong codes counts as failures', async () => {
    const t = createTestApi();
    await t.login('olivia');
    const { secret } = await enrol(t);
    for (let i = 0; i < 10; i++) expect((await login(t, { totp: '000000' })).status).toBe(401);
    const limited = await login(t, { totp: codeAt(secret, t) });
    expect(limited.status).toBe(429);
  });

  it('an owner can require it for admins: until they set it up they only reach their own account', async () => {
    const t = createTestApi();
    const { cookie: ownerCookie } = await t.login('olivia');
    const { cookie: adminCookie } = await t.login('ada', 'admin');
    expect((await t.request('PUT', '/api/team/settings', { require_totp_for_admins: true }, { cookie: adminCookie })).status).toBe(403);
    expect((await t.request('PUT', '/api/team/settings', { require_totp_for_admins: true }, { cookie: ownerCookie })).body).toEqual({ require_totp_for_admins: true });
    const blocked = await t.request('GET', '/api/apps', undefined, { cookie: adminCookie });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('totp_setup_required');
    expect((await t.request('GET', '/apps/new', undefined, { cookie: adminCookie, contentType: null })).headers.get('location')).toBe('/account?m=totp_required');
    const begun = await t.request('POST', '/api/account/totp', undefined, { cookie: adminCookie });
    expect(begun.status).toBe(201);
    await t.request('POST', '/api/account/totp/confirm', { code: codeAt(begun.body.secret, t) }, { cookie: adminCookie });
    expect((await t.request('GET', '/api/apps', undefined, { cookie: adminCookie })).status).toBe(200);
  });
});

describe('tokens', () => {
  it('scopes never exceed the role; expired tokens are refused; the list shows scopes, expiry and last use', async () => {
    const t = createTestApi();
    const { cookie: viewerCookie } = await t.login('vic', 'viewer');
    expect((await t.request('POST', '/api/tokens', { name: 'x', scopes: ['deploy:web'] }, { cookie: viewerCookie })).status).toBe(400);
    const { cookie: devCookie } = await t.login('dev', 'developer', ['web']);
    expect((await t.request('POST', '/api/tokens', { name: 'x', scopes: ['deploy:api'] }, { cookie: devCookie })).status).toBe(400);
    expect((await t.request('POST', '/api/tokens', { name: 'x', scopes: ['root'] }, { cookie: devCookie })).status).toBe(400);
    const made = await t.request('POST', '/api/tokens', { name: 'ci', scopes: ['deploy:web', 'read'], expires_in_days: 1 }, { cookie: devCookie });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ scopes: ['deploy:web', 'read'], expires_at: '2026-01-02T00:00:00Z' });
    expect((await t.request('GET', '/api/apps', undefined, { token: made.body.token })).status).toBe(200);
    const listed = (await t.request('GET', '/api/tokens', undefined, { cookie: devCookie })).body;
    expect(listed[0].last_used_at).toBe('2026-01-01T00:00:00Z');
    t.clock.advance(24 * 60 * 60 * 1000);
    expect((await t.request('GET', '/api/apps', undefined, { token: made.body.token })).status).toBe(401);
  });
});

describe('audit log', () => {
  const CSRF = 'auditcsrfcookie0123456789';
  const csrf = (t: TestApi) => createHmac('sha256', createHmac('sha256', t.config.encryptionKey).update('svc-ui-csrf-v1').digest()).update(CSRF).digest('base64url');

  it('records a change from each entry point and every reveal, with field names and never values', async () => {
    const WH = 'wh-secret-audit';
    const t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: WH } });
    const { cookie } = await t.login('olivia');
    const web = (await t.request('POST', '/api/apps', { name: 'web', fallback_port: 8080 })).body.id;
    const VALUE = 'p4ssw0rd-never-logged';
    // api
    expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'DB_PASSWORD', value: VALUE, is_secret: true })).status).toBe(201);
    // cli
    expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'CLI_VAR', value: VALUE }, { headers: { 'x-svc-origin': 'cli' } })).status).toBe(201);
    // ui
    const form = `_csrf=${encodeURIComponent(csrf(t))}&key=UI_VAR&value=${VALUE}`;
    const ui = await t.app.request(`/apps/${web}/env`, { method: 'POST', body: form, headers: { cookie: `session=${cookie}; csrf=${CSRF}`, 'content-type': 'application/x-www-form-urlencoded' } });
    expect(ui.status).toBe(303);
    // webhook
    const ping = '{"zen":"audit"}';
    const wh = await t.request('POST', '/api/webhooks/github', undefined, { raw: ping, cookie: 'none', headers: { 'x-github-event': 'ping', 'x-github-delivery': 'd-1', 'x-hub-signature-256': signBody(WH, ping) } });
    expect(wh.status).toBeLessThan(300);
    // a push that deploys an app: its entry names the app (issue 35)
    await t.request('POST', '/api/apps', { name: 'site', build_mode: 'svc_build', repo_url: 'https://github.com/acme/site', fallback_port: 8091 });
    const push = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40), repository: { full_name: 'acme/site' } });
    const pushed = await t.request('POST', '/api/webhooks/github', undefined, { raw: push, cookie: 'none', headers: { 'x-github-event': 'push', 'x-github-delivery': 'd-2', 'x-hub-signature-256': signBody(WH, push) } });
    expect(pushed.status).toBe(202);
    // manifest (a directory source: no request, audited by the apply)
    applyManifests(
      { db: t.db, sealer: t.sealer, config: t.config, log: { info() {}, warn() {}, error() {}, debug() {} } as never, enqueue: t.enqueue, bus: { emit() {} } as never, now: t.clock.now },
      { source: 'dir', location: '/m', prune: false, pruneServices: false, files: [{ file: 'a.yaml', text: 'apiVersion: svc/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  access_mode: port\n  fallback_port: 8090\n  env:\n    - key: TOKEN\n      value: hidden-manifest-value\n' }] },
    );
    expect(t.db.$client.prepare("SELECT name FROM apps WHERE name = 'api'").get()).toBeTruthy();
    // a reveal, and a read that is not one
    expect((await t.request('GET', `/api/apps/${web}/env/DB_PASSWORD/reveal`)).status).toBe(200);
    await t.request('GET', `/api/apps/${web}/env`);
    // a refused change is not a change
    const { cookie: viewer } = await t.login('vic', 'viewer');
    expect((await t.request('POST', `/api/apps/${web}/env`, { key: 'X', value: 'y' }, { cookie: viewer })).status).toBe(403);

    const all = (await t.request('GET', '/api/audit', undefined, { cookie })).body as { origin: string; action: string; fields: string[]; username: string | null; target: string | null }[];
    const raw = JSON.stringify(t.db.select().from(auditLog).all());
    expect(raw).not.toContain(VALUE);
    expect(raw).not.toContain('hidden-manifest-value');
    expect(new Set(all.map((a) => a.origin))).toEqual(new Set(['api', 'cli', 'ui', 'webhook', 'manifest']));
    const envSet = all.find((a) => a.origin === 'api' && a.action === 'POST /api/apps/:appID/env');
    // The variable's name is in the target (docs/api.md "Audit log"), its value nowhere (checked above).
    expect(envSet).toMatchObject({ username: 'olivia', target: 'web DB_PASSWORD', fields: ['key', 'value', 'is_secret'] });
    expect(all.find((a) => a.origin === 'cli')).toMatchObject({ action: 'POST /api/apps/:appID/env', target: 'web CLI_VAR' });
    expect(all.find((a) => a.origin === 'ui')).toMatchObject({ action: 'POST /apps/:id/env', target: 'web UI_VAR', fields: ['key', 'value'] });
    const hooks = all.filter((a) => a.origin === 'webhook');
    expect(hooks.map((a) => a.target)).toEqual(['site', null]); // newest first: the push names its app, the ping none
    expect(all.find((a) => a.origin === 'manifest')).toMatchObject({ action: 'manifest dir create App', fields: expect.arrayContaining(['env.TOKEN']) });
    expect(all.filter((a) => a.action.endsWith('/reveal'))).toEqual([expect.objectContaining({ target: 'web DB_PASSWORD', username: 'olivia' })]);
    expect(all.some((a) => a.action === 'GET /api/apps/:appID/env')).toBe(false);
    expect(all.some((a) => a.username === 'vic')).toBe(false);

    // Filters, and a viewer reads it too.
    const cli = await t.request('GET', '/api/audit?origin=cli', undefined, { cookie: viewer });
    expect(cli.body).toHaveLength(1);
    expect((await t.request('GET', '/api/audit?action=reveal&user=olivia', undefined, { cookie })).body).toHaveLength(1);
    expect((await t.request('GET', '/api/audit?origin=nowhere', undefined, { cookie })).status).toBe(400);
    const page = await t.app.request('/audit?origin=ui', { headers: { cookie: `session=${cookie}` } });
    expect(await page.text()).toContain('POST /apps/:id/env');
  });

  it('keeps 90 days', async () => {
    const t = createTestApi();
    await t.login('olivia');
    await t.request('POST', '/api/apps', { name: 'old', fallback_port: 8080 });
    t.clock.advance(91 * 24 * 60 * 60 * 1000);
    await t.login('later'); // the first session has long expired
    await t.request('POST', '/api/apps', { name: 'new', fallback_port: 8081 });
    expect((await t.request('GET', '/api/audit')).body.map((a: { action: string; at: string }) => a.at)).toEqual(['2026-04-02T00:00:00Z']);
  });
});

describe('start-up fix-up of an install older than teams', () => {
  it('makes the first user an owner and gives old tokens the admin scope, once', () => {
    const t = createTestApi();
    const first = t.db.insert(users).values({ username: 'admin', passwordHash: 'x' }).returning().get();
    t.db.insert(users).values({ username: 'later', passwordHash: 'x' }).run();
    expect(first.role).toBe('viewer'); // the column's default: least rights until the fix-up says otherwise
    createApiToken(t.db, first.id, { name: 'old', scopes: ['read'], expiresAt: null }, t.clock.now());
    t.db.$client.prepare('UPDATE api_tokens SET scopes = NULL').run();
    teamsFixup(t.db);
    teamsFixup(t.db);
    expect(t.db.select().from(users).all().map((u) => [u.username, u.role])).toEqual([['admin', 'owner'], ['later', 'viewer']]);
    expect(t.db.select().from(apiTokens).get()!.scopes).toEqual(['admin']);
  });
});
