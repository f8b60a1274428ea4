// /api/backup-targets through the real hono app (no store behind the endpoint: 127.0.0.1:9 refuses): the
// contract's statuses and error shapes, the auth wall, and a test action that answers the failure (502
// `target_test_failed` with the step and the network's reason), never a success.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
});

const body = { name: 'nowhere', endpoint: 'http://127.0.0.1:9', region: 'garage', bucket: 'svc-backups', access_key: 'AK', secret_key: 'SK-secret' };

describe('backup targets API', () => {
  it('creates, reads, updates and deletes; 400 names the field, 409 a taken name, 404 an unknown id', async () => {
    expect((await t.request('GET', '/api/backup-targets', undefined, { cookie: 'none' })).status).toBe(401);
    const made = await t.request('POST', '/api/backup-targets', body);
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.any(Number), name: 'nowhere', endpoint: 'http://127.0.0.1:9', region: 'garage', bucket: 'svc-backups', prefix: '',
      access_key_hint: '…', created_at: expect.any(String), updated_at: expect.any(String),
    });
    const bad = await t.request('POST', '/api/backup-targets', { ...body, name: 'other', prefix: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', error: expect.stringMatching(/^prefix: /) });
    expect((await t.request('POST', '/api/backup-targets', body)).status).toBe(409);
    expect((await t.request('GET', '/api/backup-targets/999')).status).toBe(404);
    expect((await t.request('PUT', `/api/backup-targets/${made.body.id}`, { prefix: 'svc/' })).body.prefix).toBe('svc/');
    expect((await t.request('DELETE', `/api/backup-targets/${made.body.id}`)).status).toBe(204);
    expect((await t.request('GET', '/api/backup-targets')).body).toEqual([]);
  });

  it('answers a store that cannot be reached as a failed test (502), and its listing as 503', async () => {
    const made = await t.request('POST', '/api/backup-targets', body);
    const test = await t.request('POST', `/api/backup-targets/${made.body.id}/test`);
    expect(test.status).toBe(502);
    expect(test.body).toMatchObject({ ok: false, code: 'target_test_failed', details: { step: 'write', store_error: expect.stringMatching(/ECONNREFUSED/) } });
    expect(JSON.stringify(test.body)).not.toContain('SK-secret');
    const list = await t.request('GET', `/api/backup-targets/${made.body.id}/remote`);
    expect(list.status).toBe(503);
    expect(list.body.code).toBe('target_unreachable');
    const upload = await t.request('POST', '/api/backups/999/upload');
    expect(upload.status).toBe(404);
  }, 20_000);
});
