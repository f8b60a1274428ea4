import { describe, it, expect, beforeEach } from 'vitest';
import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { apps, deploys } from '../../../src/store/schema/index.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
});
afterAll(() => rmSync(t.config.dataDir, { recursive: true, force: true }));

const stack = (image = 'img:1') => `apiVersion: svc/v1
kind: Service
metadata: {name: mf-db}
spec: {type: postgres}
---
apiVersion: svc/v1
kind: App
metadata: {name: mf-web}
spec:
  image_ref: ${image}
  fallback_port: 8080
  env:
    - {key: MODE, value: prod}
    - {key: TOKEN, is_secret: true}
  services:
    - {name: mf-db, alias: DB}
`;
const yaml = (text: string, query = '') => t.request('POST', `/api/manifests/apply${query}`, undefined, { raw: text, contentType: 'application/yaml', headers: { origin: 'http://localhost' } });
const summary = (body: any) => body.resources.map((r: any) => `${r.kind}/${r.name}:${r.action}`);

describe('POST /api/manifests/apply', () => {
  it('creates services, apps, env, links and a deploy through the store, owned by the api source', async () => {
    const res = await yaml(stack());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ source: 'api', dry_run: false, errors: [], revision: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(summary(res.body)).toEqual(['Service/mf-db:create', 'App/mf-web:create']);
    const app = (await t.request('GET', '/api/apps')).body[0];
    expect(app).toMatchObject({ name: 'mf-web', image_ref: 'img:1', fallback_port: 8080 });
    expect(t.db.select().from(apps).get()!.owner).toBe('api');
    expect((await t.request('GET', `/api/apps/${app.id}/env`)).body.map((e: any) => [e.key, e.value, e.is_secret])).toEqual([['MODE', 'prod', false], ['TOKEN', null, true]]);
    expect((await t.request('GET', `/api/apps/${app.id}/services`)).body[0]).toMatchObject({ alias: 'DB', service: { name: 'mf-db' } });
    expect(t.db.select().from(deploys).all()).toMatchObject([{ imageRef: 'img:1', status: 'pending', trigger: 'manual', origin: 'manifest' }]);
    const events = (await t.request('GET', `/api/apps/${app.id}/events`)).body;
    expect(events[0]).toMatchObject({ step: 'manifest', message: expect.stringContaining('created from the api manifests') });
    expect(t.enqueue.keys).toEqual(expect.arrayContaining(['service:mf-db', 'app:mf-web', 'proxy:main']));
  });

  it('the same content twice: all unchanged, no deploy, nothing enqueued, no event', async () => {
    await yaml(stack());
    const keys = t.enqueue.keys.length;
    const again = await yaml(stack());
    expect(summary(again.body)).toEqual(['Service/mf-db:unchanged', 'App/mf-web:unchanged']);
    expect(t.db.select().from(deploys).all()).toHaveLength(1);
    expect(t.enqueue.keys.length).toBe(keys);
    expect((await t.request('GET', '/api/apps/1/events')).body).toHaveLength(1);
  });

  it('an entry without value keeps what the API set; an image change rolls out a deploy and names the change', async () => {
    await yaml(stack());
    expect((await t.request('POST', '/api/apps/1/env', { key: 'TOKEN', value: 's3cret' })).status).toBe(200);
    const res = await yaml(stack('img:2'));
    expect(res.body.resources[1]).toMatchObject({ action: 'update', changes: ['image_ref'] });
    expect((await t.request('GET', '/api/apps/1/env/TOKEN/reveal')).body.value).toBe('s3cret');
    expect(t.db.select().from(deploys).all().map((d) => [d.imageRef, d.status])).toEqual([['img:1', 'cancelled'], ['img:2', 'pending']]);
  });

  it('a setting changed through the API on a manifest app is set back by the next apply, as a drift event', async () => {
    await yaml(stack());
    await t.request('PUT', '/api/apps/1', { health_check_path: '/changed' });
    await t.request('POST', '/api/apps/1/env', { key: 'MODE', value: 'debug' });
    const res = await yaml(stack());
    expect(res.body.resources[1]).toMatchObject({ action: 'update', changes: ['health_check_path', 'env.MODE'] });
    expect((await t.request('GET', '/api/apps/1')).body).toMatchObject({ health_check_path: '/' });
    expect((await t.request('GET', '/api/apps/1/env')).body.find((e: any) => e.key === 'MODE').value).toBe('prod');
    const events = (await t.request('GET', '/api/apps/1/events')).body;
    expect(events.at(-1)).toMatchObject({ step: 'drift', level: 'warn', message: expect.stringContaining('health_check_path, env.MODE') });
  });

  it('a REST app survives every apply; a document naming it is an error and changes nothing of its file', async () => {
    await t.request('POST', '/api/apps', { name: 'mf-rest', fallback_port: 9000 });
    const res = await yaml(`apiVersion: svc/v1\nkind: App\nmetadata: {name: mf-rest}\nspec: {fallback_port: 9001}\n---\napiVersion: svc/v1\nkind: App\nmetadata: {name: mf-new}\nspec: {fallback_port: 9002}\n`, '?prune=true');
    expect(res.body.errors).toEqual([{ file: 'request', document: 0, path: 'metadata.name', message: expect.stringContaining('through the API') }]);
    expect(res.body.resources).toEqual([]);
    expect((await t.request('GET', '/api/apps')).body.map((a: any) => [a.name, a.fallback_port])).toEqual([['mf-rest', 9000]]);
    await yaml('', '?prune=true&prune_services=true');
    expect((await t.request('GET', '/api/apps')).body).toHaveLength(1);
  });

  it('without prune an API apply deletes nothing; with prune only its own apps; services only with prune_services', async () => {
    await yaml(stack());
    await yaml('# nothing\n');
    expect((await t.request('GET', '/api/apps')).body).toHaveLength(1);
    const pruned = await yaml('', '?prune=true');
    expect(summary(pruned.body)).toEqual(['App/mf-web:delete']);
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
    expect((await t.request('GET', '/api/services')).body).toHaveLength(1);
    const res = await t.request('POST', '/api/manifests/apply', { content: '', prune: true, prune_services: true });
    expect(summary(res.body)).toEqual(['Service/mf-db:delete']);
    expect((await t.request('GET', '/api/services')).body).toEqual([]);
  });

  it('replaces a linked service by another of the same type in one apply (unlink before link)', async () => {
    await yaml(stack().replace('{name: mf-db, alias: DB}', '{name: mf-db}'));
    const two = `apiVersion: svc/v1\nkind: Service\nmetadata: {name: mf-db2}\nspec: {type: postgres}\n---\n`;
    const res = await yaml(two + stack().replace('{name: mf-db, alias: DB}', '{name: mf-db2}'));
    expect(res.body.errors).toEqual([]);
    expect(res.body.resources.find((r: any) => r.name === 'mf-web')).toMatchObject({ action: 'update', changes: ['services.mf-db', 'services.mf-db2'] });
    expect((await t.request('GET', '/api/apps/1/services')).body.map((l: any) => l.service.name)).toEqual(['mf-db2']);
  });

  it('dry_run plans and changes nothing, in JSON or with the query flag', async () => {
    const res = await t.request('POST', '/api/manifests/apply', { content: stack(), dry_run: true });
    expect(res.body).toMatchObject({ dry_run: true });
    expect(summary(res.body)).toEqual(['Service/mf-db:create', 'App/mf-web:create']);
    expect((await yaml(stack(), '?dry_run=true')).body.dry_run).toBe(true);
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
    expect((await t.request('GET', '/api/manifests')).body).toEqual([]);
  });

  it('files keep their names: a bad file is reported and the good one applies', async () => {
    const res = await t.request('POST', '/api/manifests/apply', {
      files: [
        { name: 'good.yaml', content: 'apiVersion: svc/v1\nkind: Service\nmetadata: {name: mf-cache}\nspec: {type: redis}\n' },
        { name: 'bad.yaml', content: 'apiVersion: svc/v1\nkind: App\nmetadata: {name: mf-x}\nspec: {internal_port: 0}\n' },
      ],
    });
    expect(summary(res.body)).toEqual(['Service/mf-cache:create']);
    expect(res.body.errors).toEqual([{ file: 'bad.yaml', document: 0, path: 'spec.internal_port', message: expect.any(String) }]);
  });

  it('GET /api/manifests shows the source, revision, resources and errors of the last apply', async () => {
    const applied = await yaml(stack());
    const list = (await t.request('GET', '/api/manifests')).body;
    expect(list).toEqual([{
      source: 'api', location: 'POST /api/manifests/apply', revision: applied.body.revision, applied_at: expect.any(String),
      resources: [{ kind: 'Service', name: 'mf-db', file: 'request' }, { kind: 'App', name: 'mf-web', file: 'request' }], errors: [],
    }]);
  });

  it.each([
    [{ content: 'x', files: [] }, 400],
    [{ content: 1 }, 400],
    [{ content: 'x', force: true }, 400],
    [{}, 400],
  ])('refuses a malformed JSON body %j', async (body, status) => {
    const res = await t.request('POST', '/api/manifests/apply', body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe('invalid_request');
  });

  it('refuses other content types and needs a user', async () => {
    expect((await t.request('POST', '/api/manifests/apply', undefined, { raw: 'x', contentType: 'text/plain', headers: { origin: 'http://localhost' } })).status).toBe(400);
    expect((await t.request('POST', '/api/manifests/apply', undefined, { raw: 'x', contentType: 'application/yaml' })).status).toBe(403);
    expect((await t.request('POST', '/api/manifests/apply', { content: '' }, { cookie: 'none' })).status).toBe(401);
  });
});
