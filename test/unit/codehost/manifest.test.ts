// GET /api/codehost/manifest: the manifest of API.md "Manifest flow details" and its single-use state.
import { describe, expect, it } from 'vitest';
import { createTestApi } from '../../support/api.js';
import { takeManifestState } from '../../../src/store/codehost.js';

describe('GET /api/codehost/manifest', () => {
  it('answers the manifest and the platform URL with a fresh state; it needs a user', async () => {
    const t = createTestApi({ env: { SVC_PUBLIC_URL: 'https://svc.example.com', SVC_CODEHOST_WEB_URL: 'https://ghe.example.com' } });
    expect((await t.request('GET', '/api/codehost/manifest', undefined, { cookie: 'none' })).status).toBe(401);
    const { user } = await t.login();
    const res = await t.request('GET', '/api/codehost/manifest');
    expect(res.status).toBe(200);
    expect(res.body.manifest).toMatchObject({
      url: 'https://svc.example.com',
      hook_attributes: { url: 'https://svc.example.com/api/webhooks/codehost', active: true },
      redirect_url: 'https://svc.example.com/api/codehost/setup-callback',
      callback_urls: ['https://svc.example.com/api/codehost/setup-callback'],
      default_events: ['workflow_run', 'push'],
      default_permissions: { contents: 'write', actions: 'write', metadata: 'read', packages: 'read' },
    });
    const m = /^https:\/\/ghe\.example\.com\/settings\/apps\/new\?state=([A-Za-z0-9_-]{20,})$/.exec(res.body.post_url);
    expect(m).not.toBeNull();
    const second = await t.request('GET', '/api/codehost/manifest');
    expect(second.body.post_url).not.toBe(res.body.post_url);

    const state = m![1];
    expect(takeManifestState(t.db, state, user.id + 1, t.clock.now())).toBe(false); // another user's session
    expect(takeManifestState(t.db, state, user.id, t.clock.now())).toBe(true);
    expect(takeManifestState(t.db, state, user.id, t.clock.now())).toBe(false); // single use
  });

  it('expires a state after one hour', async () => {
    const t = createTestApi();
    const { user } = await t.login();
    const url = (await t.request('GET', '/api/codehost/manifest', undefined, { headers: { host: 'box.lan:3000' } })).body.post_url as string;
    const state = new URL(url).searchParams.get('state')!;
    t.clock.advance(60 * 60 * 1000 + 1);
    expect(takeManifestState(t.db, state, user.id, t.clock.now())).toBe(false);
  });

  it('uses the address the user reached svc on without SVC_PUBLIC_URL', async () => {
    const t = createTestApi();
    await t.login();
    const res = await t.request('GET', '/api/codehost/manifest', undefined, { headers: { host: '192.168.1.5:3000' } });
    expect(res.body.manifest.hook_attributes.url).toBe('http://192.168.1.5:3000/api/webhooks/codehost');
  });
});
