import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { createTestApi } from '../../support/api.js';
import { apps, services } from '../../../src/store/schema/index.js';
import type { Db } from '../../../src/store/db.js';

let db: Db;
let dir: string;
let t: ReturnType<typeof createTestApi>;
let logLines: string[];
let enqueue: ReturnType<typeof createTestApi>['enqueue'];

const json = (method: string, path: string, body?: unknown) => t.request(method, path, body);
const app = (name: string) => db.insert(apps).values({ name }).returning().get();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-api-'));
  t = createTestApi({ env: { SVC_DATA_DIR: dir } });
  await t.login();
  db = t.db;
  logLines = t.logs;
  enqueue = t.enqueue;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('services API', () => {
  it('creates (201, pending), lists, reads; the record never carries credentials', async () => {
    const created = await json('POST', '/api/services', { name: 'main-db', type: 'postgres' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([
      'backup', 'container_name', 'created_at', 'data_dir', 'error', 'id', 'image_ref', 'internal_port', 'linked_apps', 'name', 'status', 'type', 'updated_at', 'version',
    ]);
    expect(created.body).toMatchObject({ name: 'main-db', type: 'postgres', status: 'pending', container_name: 'svc-svc-main-db', internal_port: 5432, image_ref: 'postgres:18', version: '18', linked_apps: [] }); // the newest version, its official image
    expect(enqueue.keys).toEqual(['service:main-db']);
    const list = await json('GET', '/api/services');
    expect(list.body.map((s: { name: string }) => s.name)).toEqual(['main-db']);
    const one = await json('GET', `/api/services/${created.body.id}`);
    expect(one.body).toEqual(created.body);

    const creds = await json('GET', `/api/services/${created.body.id}/credentials`);
    expect(creds.body).toEqual({ host: 'svc-svc-main-db', port: 5432, database: 'app', user: 'svc', password: expect.any(String) });
    const pw = creds.body.password as string;
    for (const text of [JSON.stringify(created.body), JSON.stringify(list.body), JSON.stringify(one.body), ...logLines]) expect(text).not.toContain(pw);
  });

  it.each([
    [{ name: 'x', type: 'mongo' }, 400, /valid types: postgres, mysql, redis, garage/],
    [{ name: 'Bad_Name', type: 'redis' }, 400, /name/],
    [{ name: 'ok' }, 400, /type/],
    [{ name: 'ok', type: 'redis', extra: 1 }, 400, /.+/],
  ])('refuses %j with %i', async (input, status, msg) => {
    const r = await json('POST', '/api/services', input);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ code: 'invalid_request', error: expect.stringMatching(msg) });
  });

  it('needs a session', async () => {
    expect((await t.request('GET', '/api/services', undefined, { cookie: 'none' })).status).toBe(401);
    expect((await t.request('GET', '/api/apps/1/services', undefined, { cookie: 'none' })).status).toBe(401);
  });

  it('duplicate name is 409; unknown or non-numeric id is 404', async () => {
    await json('POST', '/api/services', { name: 'c', type: 'redis' });
    expect((await json('POST', '/api/services', { name: 'c', type: 'mysql' })).status).toBe(409);
    expect((await json('GET', '/api/services/999')).status).toBe(404);
    expect((await json('GET', '/api/services/abc')).status).toBe(404);
    expect((await json('GET', '/api/services/999/credentials')).status).toBe(404);
  });

  it('stop and start answer 202 with the record and set the desired state', async () => {
    const { body: s } = await json('POST', '/api/services', { name: 'c', type: 'redis' });
    const stop = await json('POST', `/api/services/${s.id}/stop`);
    expect(stop.status).toBe(202);
    expect(db.select().from(services).where(eq(services.id, s.id)).get()!.desiredRunning).toBe(false);
    expect((await json('POST', `/api/services/${s.id}/start`)).status).toBe(202);
    expect(db.select().from(services).where(eq(services.id, s.id)).get()!.desiredRunning).toBe(true);
  });

  it('delete: 409 while linked, 204 with force (links gone), purge flag recorded, then 404', async () => {
    const { body: s } = await json('POST', '/api/services', { name: 'pg', type: 'postgres' });
    const a = app('web');
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: s.id })).status).toBe(201);
    const refused = await json('DELETE', `/api/services/${s.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect((await json('DELETE', `/api/services/${s.id}?force=true&purge=true`)).status).toBe(204);
    expect(db.select().from(services).where(eq(services.id, s.id)).get()!.purgeOnDelete).toBe(true);
    expect((await json('GET', `/api/services/${s.id}`)).status).toBe(404);
    expect((await json('GET', `/api/apps/${a.id}/services`)).body).toEqual([]);
  });
});

describe('links API', () => {
  it('links (201 with env_keys), lists with the service summary, shows linked_apps, unlinks (204)', async () => {
    const { body: s } = await json('POST', '/api/services', { name: 'cache', type: 'redis' });
    const a = app('web');
    const link = await json('POST', `/api/apps/${a.id}/services`, { service_id: s.id, alias: 'SESSIONS' });
    expect(link.status).toBe(201);
    expect(link.body).toMatchObject({ app_id: a.id, service_id: s.id, alias: 'SESSIONS', env_keys: ['SESSIONS_HOST', 'SESSIONS_PORT', 'SESSIONS_PASSWORD'] });
    const list = await json('GET', `/api/apps/${a.id}/services`);
    expect(list.body).toEqual([expect.objectContaining({ service_id: s.id, service: expect.objectContaining({ name: 'cache', type: 'redis' }) })]);
    expect((await json('GET', `/api/services/${s.id}`)).body.linked_apps).toEqual([{ id: a.id, name: 'web' }]);
    expect((await json('DELETE', `/api/apps/${a.id}/services/${s.id}`)).status).toBe(204);
    expect((await json('DELETE', `/api/apps/${a.id}/services/${s.id}`)).status).toBe(404);
  });

  it('404 for a missing service or app, 409 for a duplicate or colliding link, 400 for a bad alias', async () => {
    const { body: p1 } = await json('POST', '/api/services', { name: 'p1', type: 'postgres' });
    const { body: p2 } = await json('POST', '/api/services', { name: 'p2', type: 'postgres' });
    const a = app('web');
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: 999 })).status).toBe(404);
    expect((await json('POST', '/api/apps/999/services', { service_id: p1.id })).status).toBe(404);
    expect((await json('GET', '/api/apps/999/services')).status).toBe(404);
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: p1.id, alias: 'db' })).status).toBe(400);
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: p1.id })).status).toBe(201);
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: p1.id, alias: 'OTHER' })).status).toBe(409);
    const clash = await json('POST', `/api/apps/${a.id}/services`, { service_id: p2.id });
    expect(clash.status).toBe(409);
    expect(clash.body.details.colliding_keys).toContain('SQLA_PASSWORD');
    expect((await json('POST', `/api/apps/${a.id}/services`, { service_id: p2.id, alias: 'REPLICA' })).status).toBe(201);
  });
});
