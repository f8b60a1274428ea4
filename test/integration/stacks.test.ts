// Stacks on the engine (issue 32 "Tests"): the real daemon, Docker engine, host Caddy and DNS responder,
// a 4-service stack on one local busybox image (test/support/stack-images.ts), the Compose file given to
// the JSON stand-in loader (test/support/stack-loader.ts) until the real loader is merged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { restoreOffline } from '../../src/backup/offline-restore.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureStackImage, STACK_IMAGE } from '../support/stack-images.js';
import { composeText, jsonComposeLoader, type ServiceDraft } from '../support/stack-loader.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let restored: TestDaemon | undefined;
let tClosed = false;
let port: number;
let scratch: string;
let archive: string;
let dbLogAtBackup: string[] = [];
const FINAL = ['success', 'failed', 'rolled_back', 'cancelled'];
const hc = (test: string[]) => ({ kind: 'command' as const, test, intervalMs: 200, timeoutMs: 2_000, retries: 3, startPeriodMs: 0 });

function services(o: { web?: Partial<ServiceDraft>; db?: Partial<ServiceDraft>; cache?: Partial<ServiceDraft> } = {}): ServiceDraft[] {
  return [
    { name: 'db', image: STACK_IMAGE, command: ['/bin/sh', '/db'], volumes: [{ kind: 'named', volume: 'db-data', target: '/data', readOnly: false }], healthcheck: hc(['CMD', 'test', '-f', '/data/ready']), ...o.db },
    { name: 'cache', image: STACK_IMAGE, command: ['/bin/sh', '/cache'], expose: [6379], ...o.cache },
    {
      name: 'worker', image: STACK_IMAGE, command: ['/bin/sh', '/worker'],
      // Healthy only once it reached db and cache by their Compose names on the stack's network.
      healthcheck: hc(['CMD', 'test', '-f', '/tmp/ok']),
      dependsOn: [{ service: 'cache', condition: 'service_started' }, { service: 'db', condition: 'service_healthy' }],
    },
    { name: 'web', image: STACK_IMAGE, command: ['/bin/sh', '/web'], route: { kind: 'port', publishedPort: port, port: 3000 }, dependsOn: [{ service: 'db', condition: 'service_healthy' }], ...o.web },
  ];
}

async function stackContainers(): Promise<Map<string, string>> {
  const list = await runtime.list({ 'svc.instance': t.instance, 'svc.stack': 'stk' });
  return new Map(list.filter((c) => c.running).map((c) => [c.name, c.id]));
}

async function finished(stackId: number, deployId: number) {
  return waitFor(
    async () => {
      const d = (await t.api('GET', `/api/stacks/${stackId}/deploys/${deployId}`)).body;
      return FINAL.includes(d.status) ? d : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100, what: `stack deploy ${deployId}` },
  );
}

const events = async (id: number) => ((await t.api('GET', `/api/stacks/${id}/events`)).body as { message: string; service: string | null }[]).map((e) => e.message);

beforeAll(async () => {
  await ensureStackImage(runtime);
  scratch = await mkdtemp(join(tmpdir(), 'svc-test-stacks-'));
  port = await freePort();
  t = await startTestDaemon('stacks', {}, { loadCompose: jsonComposeLoader });
}, 120_000);

afterAll(async () => {
  for (const d of [t, restored]) {
    if (!d) continue;
    if (d !== t || !tClosed) await d.close().catch(() => {});
    // A failed test may leave the stack's networks: remove this daemon's (by its network's name) only.
    for (const n of (await runtime.docker.listNetworks()).filter((x) => x.Name.startsWith(`${d.network}-stack-`))) {
      await runtime.docker.getNetwork(n.Id).remove().catch(() => {});
    }
  }
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('a 4-service stack', () => {
  let id: number;

  it('comes up in depends_on order, services reach each other by name', async () => {
    const created = await t.api('POST', '/api/stacks', { name: 'stk', compose: composeText(services()) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    id = created.body.id;
    const d = await finished(id, created.body.deploy.id);
    expect(d.status, JSON.stringify(await events(id))).toBe('success');
    const log = await events(id);
    const at = (m: string) => log.findIndex((e) => e.startsWith(m));
    // Each dependency is deployed (healthy) before what depends on it starts; independent ones side by side.
    expect(at('db deployed')).toBeLessThan(at('worker: creating'));
    expect(at('cache deployed')).toBeLessThan(at('worker: creating'));
    expect(at('db deployed')).toBeLessThan(at('web: creating'));
    expect(at('cache: creating')).toBeLessThan(at('db deployed'));
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    expect((await stackContainers()).size).toBe(4);
  }, 180_000);

  it('a change to the routed web service under GET/POST load: 0 failed requests, nothing else restarted', async () => {
    const before = await stackContainers();
    let stop = false;
    const counts = { ok: 0, failed: 0 };
    const load = async (post: boolean) => {
      for (let i = 0; !stop && i < 20_000; i++) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/${post ? 'cgi-bin/echo' : ''}`, { method: post ? 'POST' : 'GET', body: post ? 'x' : undefined, signal: AbortSignal.timeout(10_000) });
          await res.text();
          if (res.status >= 200 && res.status < 300) counts.ok++;
          else counts.failed++;
        } catch {
          counts.failed++;
        }
      }
    };
    const loops = [load(false), load(true)];
    const res = await t.api('PUT', `/api/stacks/${id}`, { compose: composeText(services({ web: { environment: { VERSION: 'v2' } } })) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.plan.services.map((s: any) => [s.service, s.action])).toEqual([['db', 'unchanged'], ['cache', 'unchanged'], ['worker', 'unchanged'], ['web', 'change']]);
    const d = await finished(id, res.body.deploy.id);
    stop = true;
    await Promise.all(loops);
    expect(d.status).toBe('success');
    expect(counts.failed).toBe(0);
    expect(counts.ok).toBeGreaterThan(20);
    // The old web container drains apart from the deploy (0048): it is gone once its drain ended.
    const changed = await waitFor(async () => {
      const after = await stackContainers();
      const c = [...before.keys()].filter((n) => after.get(n) !== before.get(n));
      return c.length > 0 ? c : undefined;
    }, { timeoutMs: 30_000, what: 'the old web container drained' });
    expect(changed.length).toBe(1);
    expect(changed[0]).toContain('stk-web');
  }, 180_000);

  it('a change to the database service stops it first, says so, and keeps its volume', async () => {
    const res = await t.api('PUT', `/api/stacks/${id}`, { compose: composeText(services({ web: { environment: { VERSION: 'v2' } }, db: { environment: { VERSION: 'v2' } } })) });
    expect(res.body.plan.services.find((s: any) => s.service === 'db')).toMatchObject({ action: 'change', stop_first: true, changes: ['environment.VERSION'] });
    const d = await finished(id, res.body.deploy.id);
    expect(d.status).toBe('success');
    const log = await events(id);
    expect(log.some((m) => m.startsWith('db: changing environment.VERSION') && m.includes('stops first'))).toBe(true);
    expect(log.some((m) => /^db deployed \(stop_first downtime: \d+ ms/.test(m))).toBe(true);
    const data = readFileSync(join(t.dataDir, 'volumes', 'stk', 'db-data', 'log'), 'utf8').trim().split('\n');
    expect(data.length).toBe(2);
    expect(data[1]).toContain('v2');
  }, 180_000);

  it('a failed health check rolls every changed service back', async () => {
    const before = await stackContainers();
    const res = await t.api('PUT', `/api/stacks/${id}`, {
      compose: composeText(services({ db: { environment: { VERSION: 'v2' } }, cache: { environment: { CACHE: 'v2' } }, web: { environment: { VERSION: 'v3' }, healthcheck: hc(['CMD', 'false']) } })),
    });
    expect(res.body.deploy.steps.map((s: any) => s.service)).toEqual(['cache', 'web']);
    const d = await finished(id, res.body.deploy.id);
    expect(d.status).toBe('rolled_back');
    expect(d.steps.map((s: any) => [s.service, s.status])).toEqual([['cache', 'rolled_back'], ['web', 'failed']]);
    expect(d.error).toMatch(/^service web: /);
    // cache runs its previous definition again (no CACHE), in a new container; web kept its old one.
    const after = await stackContainers();
    const cache = [...after.keys()].find((n) => n.includes('stk-cache'))!;
    const info = await runtime.docker.getContainer(cache).inspect();
    expect(info.Config.Env.some((e: string) => e.startsWith('CACHE='))).toBe(false);
    expect([...after.keys()].find((n) => n.includes('stk-web'))).toBe([...before.keys()].find((n) => n.includes('stk-web')));
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
  }, 180_000);

  it('is in a full-state backup (taken here, restored on a fresh data directory below)', async () => {
    const res = await t.api('POST', '/api/backups');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const download = await fetch(`${t.url}/api/backups/${res.body.id}/download`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(download.status).toBe(200);
    archive = join(scratch, 'stack-backup.tar.gz');
    await writeFile(archive, Buffer.from(await download.arrayBuffer()));
    dbLogAtBackup = readFileSync(join(t.dataDir, 'volumes', 'stk', 'db-data', 'log'), 'utf8').trim().split('\n');
    expect(dbLogAtBackup.length).toBe(2);
  }, 120_000);

  it('deleting it leaves no container, network or route; the volume stays unless purged', async () => {
    expect((await t.api('DELETE', `/api/stacks/${id}`)).status).toBe(204);
    await waitFor(async () => (await runtime.list({ 'svc.instance': t.instance, 'svc.stack': 'stk' })).length === 0, { timeoutMs: 60_000, what: 'stack containers removed' });
    await waitFor(async () => (await runtime.docker.listNetworks()).every((n) => !n.Name.startsWith(`${t.network}-stack-stk_`)), { timeoutMs: 30_000, what: 'stack networks removed' });
    await waitFor(async () => !(await (await fetch(`${t.caddy.adminUrl}/config/`)).text()).includes('stk-web'), { timeoutMs: 30_000, what: 'route removed' });
    expect(existsSync(join(t.dataDir, 'volumes', 'stk', 'db-data', 'log'))).toBe(true);
  }, 120_000);
});

describe('a one-shot service (service_completed_successfully)', () => {
  const once = (code: string, version = 'v1'): ServiceDraft[] => [
    { name: 'migrate', image: STACK_IMAGE, command: ['/bin/sh', '-c', `echo run >> /data/runs; exit ${code}`], volumes: [{ kind: 'named', volume: 'mig', target: '/data', readOnly: false }] },
    { name: 'app', image: STACK_IMAGE, command: ['/bin/sh', '/cache'], environment: { VERSION: version }, dependsOn: [{ service: 'migrate', condition: 'service_completed_successfully' }] },
  ];
  const runs = () => readFileSync(join(t.dataDir, 'volumes', 'once', 'mig', 'runs'), 'utf8').trim().split('\n').length;

  it('runs to exit 0 before its dependants start and is not restarted; a failing run stops the deploy with the exit code', async () => {
    const created = await t.api('POST', '/api/stacks', { name: 'once', compose: composeText(once('0')) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.plan.services.find((s: any) => s.service === 'migrate').stop_first).toBe(false);
    const d = await finished(created.body.id, created.body.deploy.id);
    expect(d.status, JSON.stringify(await events(created.body.id))).toBe('success');
    const log = await events(created.body.id);
    expect(log.findIndex((m) => m.startsWith('migrate deployed'))).toBeLessThan(log.findIndex((m) => m.startsWith('app: creating')));
    const migrate = (await runtime.list({ 'svc.instance': t.instance, 'svc.app': 'once-migrate' }))[0]!;
    expect([migrate.running, migrate.exitCode]).toEqual([false, 0]);
    expect(runs()).toBe(1);

    // The next run exits 3: the deploy stops there, app is not touched, and the event says why.
    const res = await t.api('PUT', `/api/stacks/${created.body.id}`, { compose: composeText(once('3', 'v2')) });
    expect(res.body.deploy.steps.map((s: any) => s.service)).toEqual(['migrate', 'app']);
    const failed = await finished(created.body.id, res.body.deploy.id);
    expect(failed.status).toBe('rolled_back');
    expect(failed.steps.map((s: any) => [s.service, s.status])).toEqual([['migrate', 'failed'], ['app', 'pending']]);
    expect(failed.error).toMatch(/^service migrate: exited with code 3 /);
    expect((await events(created.body.id)).some((m) => /^migrate failed: exited with code 3 /.test(m))).toBe(true);
    // Two runs: the first (never healed once it exited 0) and the failed one.
    expect(runs()).toBe(2);
    expect((await t.api('DELETE', `/api/stacks/${created.body.id}`)).status).toBe(204);
    await waitFor(async () => (await runtime.list({ 'svc.instance': t.instance, 'svc.stack': 'once' })).length === 0, { timeoutMs: 60_000, what: 'once removed' });
  }, 180_000);
});

describe('the stack in a full-state backup', () => {
  it('restored on a fresh data directory, serves again with its volume data', async () => {
    const token = t.token;
    await t.close();
    tClosed = true;
    const fresh = await mkdtemp(join(tmpdir(), 'svc-test-stacks-restored-'));
    await restoreOffline({ archivePath: archive, dataDir: fresh, envFile: join(scratch, '.env') });
    restored = await startTestDaemon('stacks-r', {}, { dataDir: fresh, setup: false, loadCompose: jsonComposeLoader });
    const get = async (path: string) => (await fetch(restored!.url + path, { headers: { authorization: `Bearer ${token}` } })).json();
    expect((await get('/api/stacks')).map((s: { name: string }) => s.name)).toEqual(['stk']);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.status === 200, { timeoutMs: 90_000, what: 'the restored stack to serve' });
    // db came back on its restored volume (its start appends a line to what the backup held).
    const dbLog = () => (existsSync(join(fresh, 'volumes', 'stk', 'db-data', 'log')) ? readFileSync(join(fresh, 'volumes', 'stk', 'db-data', 'log'), 'utf8').trim().split('\n') : []);
    await waitFor(() => dbLog().length > dbLogAtBackup.length, { timeoutMs: 60_000, what: `db restarted on its data (log: ${JSON.stringify(dbLog())})` });
    expect(dbLog().slice(0, 2), JSON.stringify(dbLog())).toEqual(dbLogAtBackup);
    const stack = await get(`/api/stacks/${(await get('/api/stacks'))[0].id}`);
    await waitFor(async () => (await get(`/api/stacks/${stack.id}`)).services.every((s: { status: string }) => s.status === 'active'), { timeoutMs: 60_000, what: 'every service active' });
  }, 180_000);
});
