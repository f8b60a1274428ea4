// The stack endpoints through the real hono app on :memory: SQLite, with the JSON stand-in loader.
import { describe, expect, it } from 'vitest';
import { createTestApi } from '../../support/api.js';
import { composeText, jsonComposeLoader } from '../../support/stack-loader.js';
import { dbRows } from '../../support/db-snapshot.js';

const SERVICES = [
  { name: 'db', image: 'svc-test/stack:1', volumes: [{ kind: 'named' as const, volume: 'data', target: '/data', readOnly: false }] },
  { name: 'web', image: 'svc-test/stack:1', route: { kind: 'port' as const, publishedPort: 18081, port: 3000 }, dependsOn: [{ service: 'db', condition: 'service_healthy' as const }] },
];

async function api() {
  const t = createTestApi({ loadCompose: jsonComposeLoader });
  await t.login();
  return t;
}

describe('stacks API', () => {
  it('creates, shows, plans an update, deploys, and deletes', async () => {
    const t = await api();
    const created = await t.request('POST', '/api/stacks', { name: 'shop', compose: composeText(SERVICES), variables: [{ key: 'PW', value: 's3cret', is_secret: true }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.services.map((s: any) => [s.service, s.app, s.strategy])).toEqual([['db', 'shop-db', 'stop_first'], ['web', 'shop-web', 'blue_green']]);
    expect(created.body.deploy.steps.map((s: any) => s.service)).toEqual(['db', 'web']);
    expect(created.body.variables).toEqual([expect.objectContaining({ key: 'PW', value: null, is_secret: true })]);
    expect(JSON.stringify(created.body)).not.toContain('s3cret');
    const id = created.body.id;
    expect(t.enqueue.keys).toContain('stack:shop');

    const list = await t.request('GET', '/api/stacks');
    expect(list.body.map((s: any) => s.name)).toEqual(['shop']);

    const reveal = await t.request('GET', `/api/stacks/${id}/variables/PW/reveal`);
    expect([reveal.status, reveal.body.value, reveal.headers.get('cache-control')]).toEqual([200, 's3cret', 'no-store']);

    const { audit_log: _a, ...before } = dbRows(t.db);
    const dry = await t.request('PUT', `/api/stacks/${id}?dry_run=true`, { compose: composeText([SERVICES[0]!, { ...SERVICES[1]!, command: ['x'] }]) });
    expect(dry.status).toBe(200);
    expect(dry.body.dry_run).toBe(true);
    // Nothing ran yet, so both services are still to create.
    expect(dry.body.plan.services.map((s: any) => [s.service, s.action])).toEqual([['db', 'create'], ['web', 'create']]);
    const { audit_log: _b, ...after } = dbRows(t.db);
    expect(after).toEqual(before);

    const deploy = await t.request('POST', `/api/stacks/${id}/deploys`, {});
    expect(deploy.status).toBe(202);
    expect((await t.request('GET', `/api/stacks/${id}/deploys`)).body.length).toBe(2);
    expect((await t.request('GET', `/api/stacks/${id}/events`)).status).toBe(200);

    const gone = await t.request('DELETE', `/api/stacks/${id}?purge=true`);
    expect(gone.status).toBe(204);
    expect((await t.request('GET', `/api/stacks/${id}`)).status).toBe(404);
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
  });

  it('answers 400 naming the service and the key, and changes nothing', async () => {
    const t = await api();
    const before = dbRows(t.db);
    const text = JSON.stringify({ problems: [{ service: 'web', key: 'volumes[0].source', message: 'a bind mount outside the stack directory (/var/run/docker.sock) is refused' }] });
    const res = await t.request('POST', '/api/stacks', { name: 'shop', compose: text });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_compose');
    expect(res.body.error).toBe('service web: volumes[0].source: a bind mount outside the stack directory (/var/run/docker.sock) is refused');
    expect(res.body.details.problems).toEqual([{ service: 'web', key: 'volumes[0].source', message: expect.any(String) }]);
    expect(dbRows(t.db)).toEqual(before);
    const dry = await t.request('POST', '/api/stacks?dry_run=true', { name: 'shop', compose: text });
    expect([dry.status, dry.body.plan.ok, dry.body.plan.services[0].action]).toEqual([200, false, 'refused']);
    expect((await t.request('POST', '/api/stacks', { name: 'Bad Name', compose: text })).status).toBe(400);
    expect((await t.request('POST', '/api/stacks', { name: 'shop' })).status).toBe(400);
  });

  it('answers 503 when this svc has no Compose loader', async () => {
    const t = createTestApi();
    await t.login();
    const res = await t.request('POST', '/api/stacks', { name: 'shop', compose: composeText(SERVICES) });
    expect(res.status).toBe(503);
  });
});
