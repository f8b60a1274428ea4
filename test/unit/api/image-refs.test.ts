// Image references are validated at the edge with the engine's grammar (issue 12): every endpoint that
// takes one answers 400 invalid_request for a malformed value and changes nothing.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { apps, deploys } from '../../../src/store/schema/index.js';

const MALFORMED = ['-x', '../x', '../web', 'UPPER:v1', 'wéb:v1', 'web\u0000', 'a b', '', 'web:', '/web', 'x'.repeat(600)];

let t: TestApi;
let appId: number;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
  const res = await t.request('POST', '/api/apps', { name: 'rb-web', fallback_port: 8080, image_ref: 'svc-test/web:v1' });
  expect(res.status).toBe(201);
  appId = res.body.id;
});

const snapshot = () => ({ apps: t.db.select().from(apps).all(), deploys: t.db.select().from(deploys).all(), keys: t.enqueue.keys.length });

function expectInvalid(res: { status: number; body: any }) {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('image_ref') });
  expect(res.body.details.issues[0].path).toBe('image_ref');
}

describe('image_ref at the edge', () => {
  it.each(MALFORMED)('POST /api/apps refuses %j', async (ref) => {
    const before = snapshot();
    expectInvalid(await t.request('POST', '/api/apps', { name: 'rb-other', fallback_port: 8081, image_ref: ref }));
    expect(snapshot()).toEqual(before);
  });

  it.each(MALFORMED)('PUT /api/apps/{id} refuses %j', async (ref) => {
    const before = snapshot();
    expectInvalid(await t.request('PUT', `/api/apps/${appId}`, { image_ref: ref }));
    expect(snapshot()).toEqual(before);
  });

  it.each(MALFORMED)('POST /api/apps/{id}/deploys refuses %j', async (ref) => {
    const before = snapshot();
    expectInvalid(await t.request('POST', `/api/apps/${appId}/deploys`, { image_ref: ref }));
    expect(snapshot()).toEqual(before);
  });

  it('accepts registry, port, nested path, tag and digest', async () => {
    for (const ref of ['localhost:5000/team/web:v2', `ghcr.io/acme/web@sha256:${'b'.repeat(64)}`, 'web']) {
      expect((await t.request('POST', `/api/apps/${appId}/deploys`, { image_ref: ref })).status).toBe(202);
    }
    expect((await t.request('PUT', `/api/apps/${appId}`, { image_ref: 'registry.example.com:443/a/b:1.0' })).status).toBe(200);
  });

  it('a deploy of an app whose stored image predates validation is refused, not queued', async () => {
    t.db.update(apps).set({ imageRef: '../web' }).run();
    const before = snapshot();
    const res = await t.request('POST', `/api/apps/${appId}/deploys`, {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('not a valid image reference') });
    expect(snapshot()).toEqual(before);
  });
});
