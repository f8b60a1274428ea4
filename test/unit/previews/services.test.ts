// `previews.services: "fresh"` and branch deletion (issue 20) through the real hono app and a `:memory:`
// database: the preview links its own empty instance of each parent service under the same alias, with
// its own credentials; every way a preview goes (close, branch deleted, eviction, previews off, parent
// deleted, the sweep after a path that missed them) marks those services deleted with their data.
import { beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApi, type TestApi } from '../../support/api.js';
import { sendGithub } from '../../support/github-delivery.js';
import { getAppByName } from '../../../src/store/apps.js';
import { listLinks, linkedServiceEnv } from '../../../src/store/links.js';
import { allPreviews } from '../../../src/store/previews.js';
import { expirePreviews } from '../../../src/desired/previews.js';
import { apps, services } from '../../../src/store/schema/index.js';
import { Bus } from '../../../src/controller/bus.js';
import { silentLogger } from '../../../src/log.js';
import { freshServiceName } from '../../../src/previews/naming.js';
import { copiesOf } from '../../../src/store/service-copies.js';

const SECRET = 'pr-secret-for-tests';
let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009' } });
  await t.login();
});

const sha = (c: string) => c.repeat(40);
const send = (event: string, doc: unknown) => sendGithub(t, SECRET, event, doc);
const pr = (action: string, number: number, head: string, o: { fork?: string; ref?: string } = {}) =>
  send('pull_request', {
    action, number, repository: { full_name: 'acme/web' },
    pull_request: { head: { sha: head, ref: o.ref ?? `feature-${number}`, repo: { full_name: o.fork ?? 'acme/web' } }, base: { ref: 'main' } },
  });

async function parentWithDb(previews: Record<string, unknown> = { enabled: true, services: 'fresh' }) {
  const db = await t.request('POST', '/api/services', { name: 'db', type: 'postgres' });
  const cache = await t.request('POST', '/api/services', { name: 'cache', type: 'redis' });
  const app = await t.request('POST', '/api/apps', { name: 'web', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', fallback_port: 18080, previews });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  expect((await t.request('POST', `/api/apps/${app.body.id}/services`, { service_id: db.body.id, alias: 'DB' })).status).toBe(201);
  expect((await t.request('POST', `/api/apps/${app.body.id}/services`, { service_id: cache.body.id })).status).toBe(201);
  return { id: app.body.id as number, db: db.body.id as number, cache: cache.body.id as number };
}
const live = () => t.db.select().from(services).all().filter((s) => !s.deletedAt);
const deleted = () => t.db.select().from(services).all().filter((s) => s.deletedAt);

describe('previews.services: "fresh"', () => {
  it('links the preview to its own empty instance of each parent service, same alias and type, other credentials; close releases them with their data', async () => {
    const p = await parentWithDb();
    const open = await pr('opened', 3, sha('a'));
    expect(open.status, JSON.stringify(open.body)).toBe(202);
    const preview = getAppByName(t.db, 'web-pr-3')!;
    const links = listLinks(t.db, preview.id);
    expect(links.map((l) => [l.service.name, l.service.type, l.link.alias, l.service.previewSourceId])).toEqual([
      ['web-pr-3-db', 'postgres', 'DB', p.db],
      ['web-pr-3-cache', 'redis', null, p.cache],
    ]);
    const parentEnv = linkedServiceEnv(t.db, t.sealer, p.id);
    const previewEnv = linkedServiceEnv(t.db, t.sealer, preview.id);
    expect(Object.keys(previewEnv).sort()).toEqual(Object.keys(parentEnv).sort());
    expect(previewEnv.DB_HOST).toMatch(/-svc-web-pr-3-db$/);
    expect(previewEnv.DB_PASSWORD).not.toBe(parentEnv.DB_PASSWORD);
    expect(t.enqueue.keys).toContain('service:web-pr-3-db');

    // A new commit keeps the same instances (their data stays for the life of the pull request).
    await pr('synchronize', 3, sha('b'));
    expect(listLinks(t.db, preview.id).map((l) => l.service.id)).toEqual(links.map((l) => l.service.id));
    expect(live().map((s) => s.name).sort()).toEqual(['cache', 'db', 'web-pr-3-cache', 'web-pr-3-db']);

    // The parent unlinks the cache: the next update releases the preview's copy.
    expect((await t.request('DELETE', `/api/apps/${p.id}/services/${p.cache}`)).status).toBe(204);
    await pr('synchronize', 3, sha('c'));
    expect(listLinks(t.db, preview.id).map((l) => l.service.name)).toEqual(['web-pr-3-db']);
    expect(deleted().map((s) => [s.name, s.purgeOnDelete])).toEqual([['web-pr-3-cache', true]]);

    expect((await pr('closed', 3, sha('c'))).status).toBe(202);
    expect(live().map((s) => s.name).sort()).toEqual(['cache', 'db']);
    expect(deleted().every((s) => s.purgeOnDelete && !s.desiredRunning)).toBe(true);
  });

  it('services: "copy": the same instances, each asked for a copy of its parent once (at creation); a fork gets fresh ones', async () => {
    const p = await parentWithDb({ enabled: true, services: 'copy', forks: true });
    await pr('opened', 5, sha('a'));
    const preview = getAppByName(t.db, 'web-pr-5')!;
    const own = listLinks(t.db, preview.id).map((l) => l.service);
    expect(own.map((s) => [s.name, copiesOf(t.db, s.id).map((c) => [c.sourceId, c.status])])).toEqual([
      ['web-pr-5-db', [[p.db, 'pending']]],
      ['web-pr-5-cache', [[p.cache, 'pending']]],
    ]);
    await pr('synchronize', 5, sha('b'));
    expect(own.map((s) => copiesOf(t.db, s.id).length)).toEqual([1, 1]);
    await pr('opened', 6, sha('a'), { fork: 'stranger/web' });
    const forked = listLinks(t.db, getAppByName(t.db, 'web-pr-6')!.id).map((l) => l.service);
    expect(forked).toHaveLength(2);
    expect(forked.map((s) => copiesOf(t.db, s.id).length)).toEqual([0, 0]);
  });

  it('services: "none" links nothing', async () => {
    await parentWithDb({ enabled: true });
    await pr('opened', 4, sha('a'));
    expect(listLinks(t.db, getAppByName(t.db, 'web-pr-4')!.id)).toEqual([]);
    expect(live()).toHaveLength(2);
  });

  it('a fork (when allowed) gets fresh services too: empty, with credentials of their own', async () => {
    await parentWithDb({ enabled: true, services: 'fresh', forks: true });
    expect((await pr('opened', 5, sha('a'), { fork: 'mallory/web' })).status).toBe(202);
    expect(listLinks(t.db, getAppByName(t.db, 'web-pr-5')!.id)).toHaveLength(2);
  });

  it('eviction, previews off and deleting the parent release the fresh services', async () => {
    const p = await parentWithDb({ enabled: true, services: 'fresh', max: 1 });
    await pr('opened', 1, sha('a'));
    t.clock.advance(1000);
    await pr('opened', 2, sha('b'));
    expect(live().map((s) => s.name).sort()).toEqual(['cache', 'db', 'web-pr-2-cache', 'web-pr-2-db']);
    await t.request('PUT', `/api/apps/${p.id}`, { previews: { enabled: false } });
    expect(live()).toHaveLength(2);
    await t.request('PUT', `/api/apps/${p.id}`, { previews: { enabled: true, services: 'fresh' } });
    await pr('opened', 6, sha('c'));
    expect(live()).toHaveLength(4);
    expect((await t.request('DELETE', `/api/apps/${p.id}?force=true`)).status).toBe(204);
    expect(live().map((s) => s.name).sort()).toEqual(['cache', 'db']);
  });

  it('the sweep releases fresh services whose preview app went by a path that missed them', async () => {
    await parentWithDb();
    await pr('opened', 7, sha('a'));
    // As a path that deletes the app row alone would.
    t.db.delete(apps).where(eq(apps.id, getAppByName(t.db, 'web-pr-7')!.id)).run();
    const ctx = { db: t.db, sealer: t.sealer, config: t.config, enqueue: t.enqueue, bus: new Bus(), log: silentLogger, now: t.clock.now };
    expect(expirePreviews(ctx, 'schedule').sort()).toEqual(['web-pr-7-cache', 'web-pr-7-db']);
    expect(live()).toHaveLength(2);
  });

  it('names fit the 63-character rule and skip names in use', () => {
    expect(freshServiceName('web-pr-1', 'db', () => false)).toBe('web-pr-1-db');
    expect(freshServiceName('web-pr-1', 'db', (n) => n === 'web-pr-1-db')).toBe('web-pr-1-db-2');
    const long = freshServiceName('a'.repeat(55), 'postgres-main', () => false);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[a-z][a-z0-9-]*-[0-9a-f]{8}$/);
  });
});

describe('branch deletion', () => {
  it('a delete event of the head branch removes its preview; a tag or another branch does not', async () => {
    await parentWithDb();
    await pr('opened', 8, sha('a'), { ref: 'topic' });
    expect((await send('delete', { ref: 'v1', ref_type: 'tag', repository: { full_name: 'acme/web' } })).body).toEqual({ ignored: 'tag deleted' });
    expect((await send('delete', { ref: 'other', ref_type: 'branch', repository: { full_name: 'acme/web' } })).body).toEqual({ ignored: 'no preview of branch other' });
    expect((await send('delete', { ref: 'topic', ref_type: 'branch', repository: { full_name: 'acme/other' } })).body.ignored).toMatch(/no preview/);
    const res = await send('delete', { ref: 'topic', ref_type: 'branch', repository: { full_name: 'acme/web' } });
    expect(res).toMatchObject({ status: 202, body: { previews: [{ app: 'web', removed: 'web-pr-8' }] } });
    expect(allPreviews(t.db)).toEqual([]);
    expect(live()).toHaveLength(2);
  });

  it('a push with deleted: true removes it too; a fork\'s branch of the same name is not the head', async () => {
    await parentWithDb({ enabled: true, services: 'fresh', forks: true });
    await pr('opened', 9, sha('a'), { ref: 'topic' });
    await pr('opened', 10, sha('b'), { ref: 'topic', fork: 'mallory/web' });
    const res = await send('push', { ref: 'refs/heads/topic', after: '0'.repeat(40), deleted: true, repository: { full_name: 'acme/web' } });
    expect(res).toMatchObject({ status: 202, body: { previews: [{ removed: 'web-pr-9' }] } });
    expect(allPreviews(t.db).map((p) => p.prNumber)).toEqual([10]);
    const again = await send('push', { ref: 'refs/heads/gone', after: '0'.repeat(40), deleted: true, repository: { full_name: 'acme/web' } });
    expect(again.body).toEqual({ ignored: 'branch deleted' });
  });
});
