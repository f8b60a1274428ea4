// The dashboard and the static assets: apps and services tables from the store, hashed immutable assets.
import { describe, expect, it } from 'vitest';
import { ASSETS } from '../../../src/ui/assets.js';
import { addDeployEvent, updateDeploy } from '../../../src/store/deploys.js';
import { createTestApi } from '../../support/api.js';
import { formClient } from './form-client.js';

describe('dashboard', () => {
  it('lists apps with status, access URL, live image and last deploy, and services; links New app', async () => {
    const t = createTestApi();
    const { cookie } = await t.login();
    const app = (await t.request('POST', '/api/apps', { name: 'ui-web', fallback_port: 18080, image_ref: 'svc-test/web:v1' })).body;
    const dep = (await t.request('POST', `/api/apps/${app.id}/deploys`, {})).body;
    updateDeploy(t.db, undefined, dep.id, { status: 'running' });
    addDeployEvent(t.db, undefined, dep.id, 'start', 'deploying');
    await t.request('POST', '/api/services', { name: 'ui-db', type: 'postgres' });
    const b = formClient(t.app);
    b.jar.set('session', cookie);
    const p = await b.get('/');
    expect(p.status).toBe(200);
    expect(p.headers.get('cache-control')).toBe('no-store');
    expect(p.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(p.html).toContain(`<a href="/apps/${app.id}">ui-web</a>`);
    expect(p.html).toContain('http://localhost:18080');
    expect(p.html).toMatch(/class="badge s-idle"[^>]*>inactive</);
    expect(p.html).toMatch(new RegExp(`data-deploy-status="${dep.id}">running<`));
    expect(p.html).toContain('ui-db');
    expect(p.html).toContain('<a class="button" href="/apps/new">New app</a>');
  });

  it('serves assets under hashed names with a year of caching; the page links them', async () => {
    const t = createTestApi();
    for (const a of Object.values(ASSETS)) {
      expect(a.path).toMatch(/^\/assets\/[a-z]+\.[0-9a-f]{12}\.(css|js)$/);
      const res = await t.app.request(a.path);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(await res.text()).toBe(await a.body());
    }
    await t.login();
    const setupless = formClient(t.app);
    const login = await setupless.get('/login');
    expect(login.html).toContain(ASSETS.style.path);
    expect(login.html).toContain(ASSETS.script.path);
  });
});
