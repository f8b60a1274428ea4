// GET /api/templates and /api/templates/{name} (docs/api.md "Stack templates"): any signed-in user, 404 for a
// name that is not a template (a path-like one included), 401 without a session.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login('vic', 'viewer');
});

describe('stack templates API', () => {
  it('lists the catalog with what each asks and generates, without the Compose file', async () => {
    const res = await t.request('GET', '/api/templates');
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThanOrEqual(20);
    const plausible = res.body.find((x: { name: string }) => x.name === 'plausible');
    expect(plausible).toMatchObject({
      title: 'Plausible Analytics',
      category: 'analytics',
      services: ['db', 'events', 'plausible'],
      inputs: [{ name: 'DOMAIN', title: 'Domain', kind: 'domain', required: true, default: null }],
    });
    expect(plausible.generated).toContainEqual({ name: 'TOTP_VAULT_KEY', description: expect.any(String), alphabet: 'base64', length: null, bytes: 32 });
    expect(plausible.compose).toBeUndefined();
  });

  it('answers one template with its Compose file', async () => {
    const res = await t.request('GET', '/api/templates/uptime-kuma');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'uptime-kuma', services: ['uptime-kuma'], compose: expect.stringContaining('louislam/uptime-kuma:') });
  });

  it.each(['nope', '..', 'Plausible', '%2e%2e%2ftemplates'])('answers 404 for %s', async (name) => {
    const res = await t.request('GET', `/api/templates/${name}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
  });

  it('needs a session', async () => {
    expect((await t.request('GET', '/api/templates', undefined, { cookie: 'none' })).status).toBe(401);
  });
});
