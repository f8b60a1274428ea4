// pull_request deliveries through the real hono app and a `:memory:` database (issue 20): the preview app
// is created, moved to the new head, refused or evicted under `max`, and removed by close, by turning
// previews off and with its parent; a fork gets none of the parent's secrets.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { signBody } from '../../../src/codehost/signature.js';
import { sendGithub } from '../../support/github-delivery.js';
import { listDeploys } from '../../../src/store/deploys.js';
import { allPreviews } from '../../../src/store/previews.js';
import { resolveEnv } from '../../../src/store/env.js';
import { getAppByName } from '../../../src/store/apps.js';
import { expirePreviews } from '../../../src/desired/previews.js';
import { Bus } from '../../../src/controller/bus.js';
import { silentLogger } from '../../../src/log.js';

const SECRET = 'pr-secret-for-tests';
let n = 0;
let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009' } });
  await t.login();
});

const sha = (c: string) => c.repeat(40);
function deliver(action: string, number: number, head: string, o: { fork?: string } = {}) {
  const body = {
    action, number, repository: { full_name: 'acme/web' },
    pull_request: { merged: action === 'closed', head: { sha: head, ref: `feature-${number}`, repo: { full_name: o.fork ?? 'acme/web' } }, base: { ref: 'main' } },
  };
  return sendGithub(t, SECRET, 'pull_request', body);
}

async function parent(previews: Record<string, unknown> = { enabled: true }) {
  const res = await t.request('POST', '/api/apps', { name: 'web', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', fallback_port: 18080, previews });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await t.request('POST', `/api/apps/${res.body.id}/env`, { key: 'PLAIN', value: 'p' });
  await t.request('POST', `/api/apps/${res.body.id}/env`, { key: 'TOKEN', value: 's3cret', is_secret: true });
  return res.body.id as number;
}

describe('pull_request previews', () => {
  it('opened creates web-pr-7 on a preview port with the parent variables and env overrides; synchronize moves it; closed removes it', async () => {
    const id = await parent({ enabled: true, env: { PLAIN: 'overridden', EXTRA: 'x' } });
    expect((await t.request('GET', `/api/apps/${id}`)).body.previews).toEqual({ enabled: true, env: { EXTRA: 'x', PLAIN: 'overridden' }, forks: false, max: 5, resources: { cpus: 0.5, memory_mb: 256 }, services: 'none', ttl_days: 7 });
    const open = await deliver('opened', 7, sha('a'));
    expect(open.status, JSON.stringify(open.body)).toBe(202);
    expect(open.body.previews).toMatchObject([{ app: 'web', preview: 'web-pr-7' }]);
    const preview = getAppByName(t.db, 'web-pr-7')!;
    expect(preview).toMatchObject({ fallbackPort: 21000, buildMode: 'svc_build', branch: 'feature-7', memoryMb: 256, cpus: 0.5, previews: null });
    expect(resolveEnv(t.db, t.sealer, preview.id)).toEqual({ PLAIN: 'overridden', EXTRA: 'x', TOKEN: 's3cret' });
    expect(listDeploys(t.db, preview.id).map((d) => [d.commitSha, d.imageRef, d.origin])).toEqual([[sha('a'), `svc-build/web-pr-7:${sha('a')}`, 'webhook']]);

    const sync = await deliver('synchronize', 7, sha('b'));
    expect(sync.status).toBe(202);
    expect(getAppByName(t.db, 'web-pr-7')!.id).toBe(preview.id);
    expect(listDeploys(t.db, preview.id).map((d) => d.commitSha)).toContain(sha('b'));
    const listed = await t.request('GET', `/api/apps/${id}/previews`);
    expect(listed.body).toMatchObject([{ pr_number: 7, app: 'web-pr-7', head_sha: sha('b'), fork: false, status: 'inactive' }]);
    expect(listed.body[0].access_url).toMatch(/:21000$/);

    const close = await deliver('closed', 7, sha('b'));
    expect(close.status).toBe(202);
    expect(close.body.previews).toEqual([{ app: 'web', removed: 'web-pr-7' }]);
    expect(getAppByName(t.db, 'web-pr-7')).toBeUndefined();
    expect(allPreviews(t.db)).toEqual([]);
    expect((await deliver('closed', 7, sha('b'))).body.previews).toEqual([{ app: 'web', ignored: 'no preview of pull request 7' }]);
  });

  it('preview limits are settable; the parent\'s lower limit wins', async () => {
    const id = await parent({ enabled: true, resources: { memory_mb: 128, cpus: 2 } });
    await t.request('PUT', `/api/apps/${id}`, { resources: { memory_mb: 512, cpus: 1 } });
    await deliver('opened', 11, sha('a'));
    expect(getAppByName(t.db, 'web-pr-11')).toMatchObject({ memoryMb: 128, cpus: 1 });
  });

  it('a head branch name outside the branch rule is not stored as the preview branch', async () => {
    await parent();
    const body = JSON.stringify({ action: 'opened', number: 12, repository: { full_name: 'acme/web' }, pull_request: { head: { sha: sha('a'), ref: '--upload-pack=x', repo: { full_name: 'acme/web' } }, base: { ref: 'main' } } });
    const res = await t.request('POST', '/api/webhooks/github', undefined, {
      raw: body, contentType: 'application/json', cookie: 'none',
      headers: { 'x-github-event': 'pull_request', 'x-github-delivery': `pr-${++n}`, 'x-hub-signature-256': signBody(SECRET, body) },
    });
    expect(res.status).toBe(202);
    expect(getAppByName(t.db, 'web-pr-12')!.branch).toBe('main');
  });

  it('a fork is ignored unless allowed, and then gets no secret', async () => {
    const id = await parent();
    expect((await deliver('opened', 8, sha('c'), { fork: 'mallory/web' })).body.ignored).toMatch(/fork mallory\/web/);
    await t.request('PUT', `/api/apps/${id}`, { previews: { enabled: true, forks: true } });
    expect((await deliver('opened', 8, sha('c'), { fork: 'mallory/web' })).status).toBe(202);
    expect(resolveEnv(t.db, t.sealer, getAppByName(t.db, 'web-pr-8')!.id)).toEqual({ PLAIN: 'p' });
  });

  it('the oldest preview makes room under max; turning previews off removes them all; so does deleting the parent', async () => {
    const id = await parent({ enabled: true, max: 2 });
    for (const [pr, c] of [[1, 'a'], [2, 'b']] as const) {
      expect((await deliver('opened', pr, sha(c))).status).toBe(202);
      t.clock.advance(60_000);
    }
    await deliver('synchronize', 1, sha('d')); // PR 1 is now the freshest
    const third = await deliver('opened', 3, sha('e'));
    expect(third.body.previews).toMatchObject([{ preview: 'web-pr-3', evicted: ['web-pr-2'] }]);
    expect(allPreviews(t.db).map((p) => p.prNumber).sort()).toEqual([1, 3]);
    expect(getAppByName(t.db, 'web-pr-3')!.fallbackPort).toBe(21001); // web-pr-2's port was free again

    await t.request('PUT', `/api/apps/${id}`, { previews: { enabled: false } });
    expect(allPreviews(t.db)).toEqual([]);
    expect(getAppByName(t.db, 'web-pr-1')).toBeUndefined();

    await t.request('PUT', `/api/apps/${id}`, { previews: { enabled: true } });
    await deliver('opened', 4, sha('f'));
    expect((await t.request('DELETE', `/api/apps/${id}`)).status).toBe(204);
    expect(getAppByName(t.db, 'web-pr-4')).toBeUndefined();
  });

  it('ttl_days without a new commit removes the preview (the hourly sweep)', async () => {
    await parent({ enabled: true, ttl_days: 1 });
    await deliver('opened', 5, sha('a'));
    const ctx = { db: t.db, sealer: t.sealer, config: t.config, enqueue: t.enqueue, bus: new Bus(), log: silentLogger, now: t.clock.now };
    t.clock.advance(86_400_000 - 1_000);
    expect(expirePreviews(ctx, 'schedule')).toEqual([]);
    t.clock.advance(1_000);
    expect(expirePreviews(ctx, 'schedule')).toEqual(['web-pr-5']);
    expect(getAppByName(t.db, 'web-pr-5')).toBeUndefined();
  });

  it('a push to the preview branch does not build the preview twice (its synchronize does)', async () => {
    await parent();
    await deliver('opened', 6, sha('a'));
    const body = JSON.stringify({ ref: 'refs/heads/feature-6', after: sha('b'), deleted: false, repository: { full_name: 'acme/web' } });
    const res = await t.request('POST', '/api/webhooks/github', undefined, {
      raw: body, contentType: 'application/json', cookie: 'none',
      headers: { 'x-github-event': 'push', 'x-github-delivery': `push-${++n}`, 'x-hub-signature-256': signBody(SECRET, body) },
    });
    expect(res.body.ignored).toMatch(/branch feature-6 is not deployed/);
  });

  it('a port-mode app without SVC_PREVIEW_PORTS gets an answer naming the setting, and the delivery is still recorded', async () => {
    t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET } });
    await t.login();
    await parent();
    const res = await deliver('opened', 9, sha('a'));
    expect(res.status).toBe(200);
    expect(res.body.previews[0].error).toMatch(/SVC_PREVIEW_PORTS/);
    expect(getAppByName(t.db, 'web-pr-9')).toBeUndefined();
  });

  it('rejects bad settings with 400 and changes nothing', async () => {
    const res = await t.request('POST', '/api/apps', { name: 'bad', fallback_port: 18090, previews: { enabled: true, max: 0, services: 'shared' } });
    expect(res.status).toBe(400);
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
  });
});
