// Pull-request previews in the UI (issue 20): the app page lists its previews (link, state, commit, branch,
// age), a preview's page names its parent, and the settings form reads and writes `previews` through the
// API's schema (create with previews on, turn them off keeping the settings, bad values refused).
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';
import { signBody } from '../../../src/codehost/signature.js';
import { getApp, getAppByName } from '../../../src/store/apps.js';
import { settingsOf } from '../../../src/previews/settings.js';

const SECRET = 'ui-previews-secret';
let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009' } });
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
});

const base = { image_ref: '', internal_port: '3000', access_mode: 'port', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', branch: 'main', health_check_path: '/', app_type: 'managed', project_type: 'auto' };

describe('previews in the UI', () => {
  it('creates an app with previews from the form, lists its previews on its page, and a preview names its parent', async () => {
    await b.get('/apps/new');
    const created = await b.post('/apps/new', {
      ...base, name: 'web', fallback_port: '18080', previews_form: '1', previews_enabled: 'on', previews_max: '3', previews_ttl_days: '2',
      previews_services: 'fresh', previews_memory_mb: '128', previews_cpus: '0.25', previews_env: 'STAGE=preview\r\nURL=a=b\r\n',
    });
    expect(created.status, roleText(created.html, 'alert')).toBe(303);
    const parent = getAppByName(t.db, 'web')!;
    expect(settingsOf(parent.previews)).toEqual({ enabled: true, forks: false, max: 3, ttl_days: 2, services: 'fresh', env: { STAGE: 'preview', URL: 'a=b' }, resources: { memory_mb: 128, cpus: 0.25 } });

    const body = JSON.stringify({ action: 'opened', number: 7, repository: { full_name: 'acme/web' }, pull_request: { head: { sha: 'a'.repeat(40), ref: 'feature-7', repo: { full_name: 'acme/web' } }, base: { ref: 'main' } } });
    const res = await t.request('POST', '/api/webhooks/github', undefined, {
      raw: body, contentType: 'application/json', cookie: 'none',
      headers: { 'x-github-event': 'pull_request', 'x-github-delivery': 'ui-1', 'x-hub-signature-256': signBody(SECRET, body) },
    });
    expect(res.status).toBe(202);
    const preview = getAppByName(t.db, 'web-pr-7')!;
    t.clock.advance(3 * 3600_000);

    const page = await b.get(`/apps/${parent.id}/previews`);
    expect(page.html).toContain('Pull-request previews');
    expect(page.html).toContain('svc previews web');
    const table = /<table aria-label="Previews">([\s\S]*?)<\/table>/.exec(page.html)![1];
    expect(table).toContain('#7');
    expect(table).toContain(`href="/apps/${preview.id}"`);
    expect(table).toContain('http://localhost:21000');
    expect(table).toContain('a'.repeat(12));
    expect(table).toContain('feature-7');
    expect(table).toContain('3 h ago');
    // The form shows the stored settings.
    const settings = await b.get(`/apps/${parent.id}/settings`);
    expect(settings.html).toMatch(/name="previews_enabled" checked/);
    expect(settings.html).toMatch(/<option value="fresh" selected/);
    expect(settings.html).toContain('STAGE=preview\nURL=a=b</textarea>');

    const child = await b.get(`/apps/${preview.id}`);
    expect(child.html).toContain(`Preview of pull request #7 of <a href="/apps/${parent.id}">web</a>`);
    expect(child.html).not.toContain('aria-label="Previews"');
  });

  it('turning previews off in the settings keeps the other settings; all defaults and off stores none; bad values are refused', async () => {
    const api = await t.request('POST', '/api/apps', { name: 'web', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', fallback_port: 18080, previews: { enabled: true, max: 4 } });
    expect(api.status).toBe(201);
    await b.get(`/apps/${api.body.id}/settings`);
    const bad = await b.post(`/apps/${api.body.id}/settings`, { ...base, fallback_port: '18080', previews_form: '1', previews_enabled: 'on', previews_max: '0' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toMatch(/max/);
    const off = await b.post(`/apps/${api.body.id}/settings`, { ...base, fallback_port: '18080', previews_form: '1', previews_max: '4', previews_ttl_days: '7', previews_services: 'none' });
    expect(off.status, roleText(off.html, 'alert')).toBe(303);
    expect(settingsOf(getApp(t.db, api.body.id)!.previews)).toMatchObject({ enabled: false, max: 4 });
    // All at the defaults and off: no settings at all.
    const cleared = await b.post(`/apps/${api.body.id}/settings`, { ...base, fallback_port: '18080', previews_form: '1', previews_max: '5', previews_ttl_days: '7', previews_services: 'none', previews_memory_mb: '256', previews_cpus: '0.5' });
    expect(cleared.status).toBe(303);
    expect(getApp(t.db, api.body.id)!.previews).toBeNull();
  });
});
