// Journey: operations as code. A team keeps its apps and services in a manifests repository (a local git
// repository svc polls every second). Commits create and change them; an operator's `docker rm -f` is
// healed; a hand edit through the API is set back as drift; a deploy by the CLI is rolled back and git
// leaves it alone; a bad image is reverted by a commit; a backup is restored while git keeps being the
// truth for configuration and the backup for data. Each step asserts what the team sees: API answers,
// what the proxy serves, what the CLI prints. One daemon, steps in order.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { ensureTestImages, WEB_CRASH, WEB_ENV, WEB_V1, WEB_V2 } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { runSvc } from '../support/svc-cli.js';
import { waitFor } from '../support/wait.js';

const docker = promisify(execFile);
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let repo: TestRepo;
let work: string;
const ports = { shop: 0, admin: 0 };
const revisions: string[] = [];

/** The repository's one manifest file: a Redis, the shop (pinned image, linked) and admin (image from deploys). */
const stack = (o: { shopImage: string; mode: string; extraEnv?: string }) => `apiVersion: svc/v1
kind: Service
metadata: {name: cache}
spec: {type: redis}
---
apiVersion: svc/v1
kind: App
metadata: {name: shop}
spec:
  image_ref: ${o.shopImage}
  internal_port: 3000
  fallback_port: ${ports.shop}
  env:
    - {key: MODE, value: ${o.mode}}${o.extraEnv ?? ''}
  services:
    - {name: cache}
---
apiVersion: svc/v1
kind: App
metadata: {name: admin}
spec:
  internal_port: 3000
  fallback_port: ${ports.admin}
`;

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  work = mkdtempSync(join(tmpdir(), 'svc-journey-ops-'));
  ports.shop = await freePort();
  ports.admin = await freePort();
  repo = await createTestRepo('acme/infra');
  revisions.push(await repo.commit({ 'stack.yaml': stack({ shopImage: WEB_ENV, mode: 'prod' }) }));
  t = await startTestDaemon('jops', { ...serviceImageEnv(), SVC_MANIFESTS_GIT_URL: repo.url, SVC_MANIFESTS_GIT_INTERVAL_SECONDS: '1' });
}, 600_000);
afterAll(async () => {
  await t?.close();
  await repo?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

const svc = (...args: string[]) => runSvc(args, { cwd: work, env: { SVC_URL: t.url, SVC_TOKEN: t.token } });
const appNamed = async (name: string) => ((await t.api('GET', '/api/apps')).body as any[]).find((a) => a.name === name);
const serviceNamed = async (name: string) => ((await t.api('GET', '/api/services')).body as any[]).find((s) => s.name === name);
const gitSource = async () => ((await t.api('GET', '/api/manifests')).body as any[]).find((m) => m.source === 'git');
const atRevision = (sha: string) => waitFor(async () => {
  const g = await gitSource();
  return g?.revision === sha && g.errors.length === 0 ? g : undefined;
}, { timeoutMs: 30_000, what: `the git source applied at ${sha.slice(0, 8)}` });
const page = async (port: number, path = '/') => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined);
  return res?.ok ? res.text() : '';
};
const serving = (port: number, text: string, path = '/') => waitFor(async () => (await page(port, path)).includes(text), { timeoutMs: 60_000, what: `port ${port}${path} to serve "${text}"` });
const finished = (id: number) => deployReaching(t, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 90_000);
/** The newest deploy of app `id` once it has finished (and is not `exceptId`). */
const newestFinished = (id: number, exceptId?: number) => waitFor(async () => {
  const d = ((await t.api('GET', `/api/apps/${id}/deploys`)).body as any[])[0];
  return d && d.id !== exceptId && ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status) ? d : undefined;
}, { timeoutMs: 90_000, what: `a new finished deploy of app ${id}` });

async function redis(...args: string[]): Promise<string> {
  const s = await serviceNamed('cache');
  const c = (await t.api('GET', `/api/services/${s.id}/credentials`)).body;
  // A failure says what the team would look at: the service's status and the container's last lines.
  const why = async (what: string) => {
    const tail = await docker('docker', ['logs', '--tail', '5', s.container_name]).then((o) => o.stdout + o.stderr, (e: Error) => e.message);
    return new Error(`redis-cli: ${what} (service ${s.status}: ${s.error ?? ''}; container: ${tail.trim()})`);
  };
  const r = await runtime.exec(s.container_name, ['redis-cli', '-h', '127.0.0.1', ...args], { env: { REDISCLI_AUTH: c.password } }).catch(async (e: Error) => {
    throw await why(e.message);
  });
  if (r.exitCode !== 0) throw await why(r.stderr);
  return r.stdout.trim();
}

describe('journey: operations as code', () => {
  it('the first commit becomes a running Redis and a linked shop that serves; admin waits for an image', async () => {
    const shop = await waitFor(async () => {
      const a = await appNamed('shop');
      return a?.status === 'active' ? a : undefined;
    }, { timeoutMs: 180_000, what: 'shop active' });
    const cache = await waitFor(async () => {
      const s = await serviceNamed('cache');
      if (s?.status === 'error') throw new Error(s.error);
      return s?.status === 'active' ? s : undefined;
    }, { timeoutMs: 180_000, what: 'cache active' });
    expect(cache.linked_apps).toMatchObject([{ name: 'shop' }]);
    const env = await serving(ports.shop, 'MODE=prod', '/cgi-bin/env').then(() => page(ports.shop, '/cgi-bin/env'));
    expect(env).toContain(`CACHE_HOST=${cache.container_name}`);
    const applied = await atRevision(revisions[0]);
    expect(applied.location).toBe(`${repo.url}#main`);
    expect(applied.resources.map((r: any) => `${r.file} ${r.kind} ${r.name}`).sort()).toEqual(['stack.yaml App admin', 'stack.yaml App shop', 'stack.yaml Service cache']);
    const admin = await appNamed('admin');
    expect(admin).toMatchObject({ status: 'inactive', image_ref: null });
    expect(((await t.api('GET', `/api/apps/${shop.id}/events`)).body as any[])[0]).toMatchObject({ step: 'manifest', message: expect.stringContaining('created from the git manifests') });
    const apps = await svc('apps');
    expect(apps.code, apps.stderr).toBe(0);
    expect(apps.stdout).toMatch(new RegExp(`\\nshop\\s+active\\s+1\\s+${WEB_ENV}`));
    await redis('SET', 'orders', 'before-backup');
  });

  it('a commit that changes the image and a variable rolls out a deploy from the manifest', async () => {
    const shop = await appNamed('shop');
    const first = ((await t.api('GET', `/api/apps/${shop.id}/deploys`)).body as any[])[0];
    revisions.push(await repo.commit({ 'stack.yaml': stack({ shopImage: WEB_V2, mode: 'canary' }) }));
    await atRevision(revisions[1]);
    const d = await newestFinished(shop.id, first.id);
    expect(d).toMatchObject({ status: 'success', image_ref: WEB_V2, origin: 'manifest', trigger: 'manual', env_diff: { changed: ['MODE'] } });
    await serving(ports.shop, 'svc-test web v2');
    expect(await appNamed('shop')).toMatchObject({ image_ref: WEB_V2, config_changed: false });
  });

  it("an operator's docker rm -f of the live container is healed and the shop serves again", async () => {
    const before = await appNamed('shop');
    await docker('docker', ['rm', '-f', before.live_container_name]);
    await waitFor(async () => {
      const a = await appNamed('shop');
      return a.status === 'active' && a.live_container_name && (await page(ports.shop)).includes('svc-test web v2');
    }, { timeoutMs: 60_000, what: 'the shop healed' });
    const events = (await t.api('GET', `/api/apps/${before.id}/events`)).body as any[];
    expect(events.find((e) => e.step === 'heal')).toMatchObject({ level: 'warn', message: expect.stringMatching(/was gone; recreated/) });
    // Healing is not a deploy: the history is unchanged.
    expect(((await t.api('GET', `/api/apps/${before.id}/deploys`)).body as any[])[0].image_ref).toBe(WEB_V2);
  });

  it('a hand edit through the API is set back at the next poll, as a drift event, and both are in the audit log', async () => {
    const shop = await appNamed('shop');
    expect((await t.api('PUT', `/api/apps/${shop.id}`, { health_check_path: '/by-hand' })).status).toBe(200);
    await waitFor(async () => (await appNamed('shop')).health_check_path === '/', { timeoutMs: 30_000, what: 'drift reverted' });
    const events = (await t.api('GET', `/api/apps/${shop.id}/events`)).body as any[];
    expect(events.find((e) => e.step === 'drift')).toMatchObject({ level: 'warn', message: expect.stringContaining('health_check_path') });
    const audit = (await t.api('GET', '/api/audit?limit=500')).body as any[];
    // The hand edit names who, which app (by its id: the route's rule names no app) and which field.
    expect(audit.find((r) => r.action === 'PUT /api/apps/:appID')).toMatchObject({ username: 'admin', origin: 'api', target: `appID=${shop.id}`, fields: ['health_check_path'] });
    expect(audit.some((r) => r.origin === 'manifest' && r.action === 'manifest git update App' && r.target?.startsWith('shop@'))).toBe(true);
  });

  it('admin is deployed by the CLI and rolled back; the git source leaves the rolled back image alone', async () => {
    for (const image of [WEB_V1, WEB_V2]) {
      const out = await svc('deploy', 'admin', '--image', image, '--follow');
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stdout).toMatch(/deploy \d+: success\n$/);
    }
    await serving(ports.admin, 'svc-test web v2');
    const admin = await appNamed('admin');
    const rb = await t.api('POST', `/api/apps/${admin.id}/deploys/rollback`);
    expect(rb.status, JSON.stringify(rb.body)).toBe(202);
    expect((await finished(rb.body.id)).status).toBe('success');
    await serving(ports.admin, 'svc-test web v1');
    // A commit that does not touch admin is applied as a whole: admin stays on the rolled back image.
    revisions.push(await repo.commit({ 'README.md': 'the shop and its admin\n' }));
    await atRevision(revisions.at(-1)!);
    expect(await appNamed('admin')).toMatchObject({ image_ref: WEB_V1, status: 'active' });
    expect(((await t.api('GET', `/api/apps/${admin.id}/deploys`)).body as any[]).map((d) => [d.trigger, d.image_ref])).toEqual([
      ['rollback', WEB_V1],
      ['manual', WEB_V2],
      ['manual', WEB_V1],
    ]);
  });

  it('a commit with an image that crashes at start keeps v2 serving; a revert commit rolls out v1', async () => {
    const shop = await appNamed('shop');
    const last = ((await t.api('GET', `/api/apps/${shop.id}/deploys`)).body as any[])[0];
    revisions.push(await repo.commit({ 'stack.yaml': stack({ shopImage: WEB_CRASH, mode: 'canary' }) }));
    const bad = await newestFinished(shop.id, last.id);
    expect(bad).toMatchObject({ status: 'auto_rollback', image_ref: WEB_CRASH, origin: 'manifest' });
    expect(await page(ports.shop)).toContain('svc-test web v2');
    await atRevision(revisions[3]);
    revisions.push(await repo.commit({ 'stack.yaml': stack({ shopImage: WEB_V1, mode: 'canary' }) }));
    await atRevision(revisions[4]);
    expect(await newestFinished(shop.id, bad.id)).toMatchObject({ status: 'success', image_ref: WEB_V1, origin: 'manifest' });
    await serving(ports.shop, 'svc-test web v1');
  });

  it('a restore brings back the data of the backup while git stays the truth for configuration', async () => {
    const made = await svc('backup', 'create');
    expect(made.code, made.stderr).toBe(0);
    const id = /backup (\d+) completed: svc-backup-\d{8}-\d{6}\.tar\.gz/.exec(made.stdout)?.[1];
    expect(id, made.stdout).toBeTruthy();

    // After the backup: the data changes and a commit adds a variable and moves the image.
    await redis('SET', 'orders', 'after-backup');
    revisions.push(await repo.commit({ 'stack.yaml': stack({ shopImage: WEB_ENV, mode: 'canary', extraEnv: '\n    - {key: REGION, value: eu-west}' }) }));
    await atRevision(revisions[5]);
    await serving(ports.shop, 'REGION=eu-west', '/cgi-bin/env');

    const restored = await svc('restore', id!);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/restore \d+ completed; safety backup \d+/);

    // The data is the backup's.
    expect(await waitFor(() => redis('GET', 'orders'), { timeoutMs: 120_000, what: 'redis after the restore' })).toBe('before-backup');
    // The configuration converges back to the repository's head: the variable and image of the last commit.
    await atRevision(revisions[5]);
    await serving(ports.shop, 'REGION=eu-west', '/cgi-bin/env');
    expect(await appNamed('shop')).toMatchObject({ image_ref: WEB_ENV, status: 'active' });
    const env = (await t.api('GET', `/api/apps/${(await appNamed('shop')).id}/env`)).body as any[];
    expect(env.map((v) => `${v.key}=${v.value}`).sort()).toEqual(['MODE=canary', 'REGION=eu-west']);
    // admin, deployed outside git, is as it was at the backup.
    await serving(ports.admin, 'svc-test web v1');
    expect(await appNamed('admin')).toMatchObject({ image_ref: WEB_V1 });
  });
});
