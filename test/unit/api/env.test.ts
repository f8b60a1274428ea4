import { describe, it, expect, beforeEach } from 'vitest';
import { apps, envHistory, envVars } from '../../../src/store/schema/index.js';
import { createTestApi, type TestApi } from '../../support/api.js';

let t: TestApi;
let appId: number;
beforeEach(async () => {
  t = createTestApi();
  await t.login('alice');
  appId = (await t.request('POST', '/api/apps', { name: 'web', fallback_port: 8080 })).body.id;
  t.enqueue.keys.length = 0;
});
const env = (path = '') => `/api/apps/${appId}/env${path}`;
const configVersion = () => t.db.select().from(apps).get()!.configVersion;

describe('env vars', () => {
  it('POST 201 for a new key, 200 for an update; list by key; each change bumps the config version and enqueues', async () => {
    const created = await t.request('POST', env(), { key: 'PORT', value: '8000' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ key: 'PORT', value: '8000', is_secret: false, required: false, empty: false, updated_at: expect.any(String) });
    expect(configVersion()).toBe(1);
    expect(t.enqueue.keys).toEqual(['app:web']);
    const updated = await t.request('POST', env(), { key: 'PORT', value: '9000', required: true });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ key: 'PORT', value: '9000', required: true });
    expect(configVersion()).toBe(2);
    await t.request('POST', env(), { key: 'A_FIRST', value: '' });
    expect((await t.request('GET', env())).body.map((v: { key: string }) => v.key)).toEqual(['A_FIRST', 'PORT']);
  });

  it('setting exactly what is stored writes nothing (no history, no version bump, no enqueue)', async () => {
    await t.request('POST', env(), { key: 'A', value: '1' });
    t.enqueue.keys.length = 0;
    expect((await t.request('POST', env(), { key: 'A', value: '1' })).status).toBe(200);
    expect(configVersion()).toBe(1);
    expect(t.enqueue.keys).toEqual([]);
    expect(t.db.select().from(envHistory).all()).toHaveLength(1);
  });

  it('a secret is sealed at rest, null in every answer but reveal, and never in history', async () => {
    const secret = 'hunter2-very-secret-value';
    const res = await t.request('POST', env(), { key: 'DB_PASSWORD', value: secret, is_secret: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ key: 'DB_PASSWORD', value: null, is_secret: true });
    const row = t.db.select().from(envVars).get()!;
    expect(row.value).toBeNull();
    expect(row.secretSealed).toMatch(/^v1\./);
    expect(t.sealer.open(row.secretSealed!)).toBe(secret);
    const raw = t.db.$client.prepare('select * from env_vars union all select id, app_id, key, value, null, is_secret, required, changed_at from env_history').all();
    expect(JSON.stringify(raw)).not.toContain(secret);

    const list = await t.request('GET', env());
    expect(list.body).toEqual([{ key: 'DB_PASSWORD', value: null, is_secret: true, required: false, empty: false, updated_at: expect.any(String) }]);
    const history = await t.request('GET', env('/DB_PASSWORD/history'));
    expect(JSON.stringify(history.body)).not.toContain(secret);
    expect(history.body[0].value).toBeNull();
    const detail = await t.request('GET', `/api/apps/${appId}`);
    for (const text of [JSON.stringify(list.body), JSON.stringify(detail.body), ...t.logs]) expect(text).not.toContain(secret);

    const reveal = await t.request('GET', env('/DB_PASSWORD/reveal'));
    expect(reveal.status).toBe(200);
    expect(reveal.body).toEqual({ key: 'DB_PASSWORD', value: secret });
    expect(reveal.headers.get('cache-control')).toBe('no-store');
    expect(t.logs.join('\n')).not.toContain(secret);
  });

  it('turning a plain variable into a secret without resending the value seals the stored value', async () => {
    await t.request('POST', env(), { key: 'TOKEN', value: 'abc123' });
    const res = await t.request('POST', env(), { key: 'TOKEN', is_secret: true });
    expect(res.body).toMatchObject({ value: null, is_secret: true });
    expect(t.db.select().from(envVars).get()!.value).toBeNull();
    expect((await t.request('GET', env('/TOKEN/reveal'))).body.value).toBe('abc123');
  });

  it('history: newest first, actions created/updated/deleted, old plain values kept, changed_by the user', async () => {
    await t.request('POST', env(), { key: 'MODE', value: 'a' });
    await t.request('POST', env(), { key: 'MODE', value: 'b' });
    await t.request('POST', env(), { key: 'MODE', value: 's3cr3t', is_secret: true });
    expect((await t.request('DELETE', env('/MODE'))).status).toBe(204);
    const history = await t.request('GET', env('/MODE/history'));
    expect(history.status).toBe(200);
    expect(history.body.map((h: { action: string; value: string | null; is_secret: boolean }) => [h.action, h.value, h.is_secret])).toEqual([
      ['deleted', null, true],
      ['updated', null, true],
      ['updated', 'b', false],
      ['created', 'a', false],
    ]);
    expect(history.body.at(-1)).toEqual({ key: 'MODE', action: 'created', is_secret: false, required: false, value: 'a', changed_at: expect.any(String), changed_by: 'alice' });
    expect((await t.request('GET', env())).body).toEqual([]);
  });

  it('DELETE 204 bumps and enqueues; 404 for an unknown key, app or id', async () => {
    await t.request('POST', env(), { key: 'A', value: '1' });
    t.enqueue.keys.length = 0;
    expect((await t.request('DELETE', env('/A'))).status).toBe(204);
    expect(configVersion()).toBe(2);
    expect(t.enqueue.keys).toEqual(['app:web']);
    expect((await t.request('DELETE', env('/A'))).status).toBe(404);
    expect((await t.request('DELETE', env('/not-a-key!'))).status).toBe(404);
    expect((await t.request('GET', env('/NEVER/history'))).status).toBe(404);
    expect((await t.request('GET', env('/NEVER/reveal'))).status).toBe(404);
    expect((await t.request('GET', '/api/apps/999/env')).status).toBe(404);
    expect((await t.request('POST', '/api/apps/999/env', { key: 'A', value: '1' })).status).toBe(404);
    expect((await t.request('GET', '/api/apps/abc/env')).status).toBe(404);
  });

  it.each([
    [{ value: '1' }, 'key'],
    [{ key: '1ABC', value: '1' }, 'key'],
    [{ key: 'A-B', value: '1' }, 'key'],
    [{ key: 'A'.repeat(257), value: '1' }, 'key'],
    [{ key: 'A', value: 1 }, 'value'],
    [{ key: 'A', value: '1', is_secret: 'yes' }, 'is_secret'],
    [{ key: 'A', value: '1', required: 1 }, 'required'],
    [{ key: 'A', value: '1', other: true }, ''],
  ])('400 for %j (issue at %s)', async (body, path) => {
    const res = await t.request('POST', env(), body);
    expect(res.status).toBe(400);
    expect(res.body.details.issues[0].path).toBe(path);
  });

  it('values up to 64 KiB (of UTF-8); a larger one is 400 invalid_request on value and changes nothing', async () => {
    expect((await t.request('POST', env(), { key: 'BIG', value: 'x'.repeat(64 * 1024) })).status).toBe(201);
    const version = configVersion();
    for (const value of ['x'.repeat(64 * 1024 + 1), 'é'.repeat(32 * 1024 + 1)]) {
      const res = await t.request('POST', env(), { key: 'BIG', value });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('value') });
      expect(res.body.details.issues[0].path).toBe('value');
    }
    expect(configVersion()).toBe(version);
    expect((await t.request('GET', env('/BIG/reveal'))).body.value).toHaveLength(64 * 1024);
  });

  it('history keeps the order of changes made in the same second', async () => {
    for (const value of ['1', '2', '3', '4']) await t.request('POST', env(), { key: 'FAST', value }); // one fake second
    const history = await t.request('GET', env('/FAST/history'));
    expect(new Set(history.body.map((h: { changed_at: string }) => h.changed_at)).size).toBe(1);
    expect(history.body.map((h: { value: string }) => h.value)).toEqual(['4', '3', '2', '1']);
  });

  it('a required variable may be created empty', async () => {
    const res = await t.request('POST', env(), { key: 'API_KEY', required: true, is_secret: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ key: 'API_KEY', value: null, required: true, is_secret: true, empty: true });
    expect((await t.request('GET', env('/API_KEY/reveal'))).body).toEqual({ key: 'API_KEY', value: '' });
  });
});
