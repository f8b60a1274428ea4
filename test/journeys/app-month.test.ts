// Journey: an app's month, from the first push to a lost host. A shop built by svc from a local git
// repository (a Dockerfile whose process runs as uid 1001), with a Postgres, a Redis, a volume and a
// scheduled job, deployed by pushes; a pull-request preview opened and closed; a backup copied to the S3
// stand-in; then the host is lost (daemon, containers, data directory) and `svc restore s3://... --latest`
// on a fresh directory brings everything back: it serves with its data, its secret, its files (their owner
// and mode) and its history. Each step asserts what the team sees: API answers, what the proxy serves, what
// the CLI prints. One daemon (then the restored one), steps in order.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBody } from '../../src/codehost/signature.js';
import { silentLogger } from '../../src/log.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort, startCaddy, type TestCaddy } from '../support/caddy.js';
import { deployReaching, removeInstance, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { ensureTestImages, WEB_ENV } from '../support/images.js';
import { startS3Standin, type S3Standin } from '../support/s3-standin.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { runSvc } from '../support/svc-cli.js';
import { waitFor } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const WEBHOOK_SECRET = 'journey-month-webhook';
const PASSPHRASE = 'journey month passphrase 5d2e';
const SHOP_SECRET = 'shop-secret-value-91f0c7';
const runtime = createDockerRuntime({ log: silentLogger });

let t: TestDaemon | undefined;
let s3: S3Standin;
let repo: TestRepo;
let work: string;
let host2: string;
let caddy2: TestCaddy | undefined;
let b: ChildProcess | undefined;
let bOut = '';
let bEnv: Record<string, string> = {};
let token = '';
let url = '';
const port = { shop: 0, preview: 0 };
const ids = { shop: 0, db: 0, cache: 0 };
/** What the team saw before the host was lost, compared after the restore. */
const before: { deploys?: any[]; secretHistory?: any[]; runs?: any[]; auditIds?: number[]; dbContainer?: string; cacheContainer?: string } = {};

/** The shop's repository: the web test image with its own page and a CGI that prints the volume's notes, run as 1001. */
const source = (title: string) => ({
  Dockerfile: `FROM ${WEB_ENV}\nCOPY index.html /www/index.html\nCOPY notes.cgi /www/cgi-bin/notes\nRUN ["/bin/busybox", "chmod", "755", "/www/cgi-bin/notes"]\nUSER 1001:1001\n`,
  'index.html': `<h1>${title}</h1>\n`,
  'notes.cgi': '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\ncat /data/notes.txt 2>&1\n',
});
/** The scheduled job: appends to the volume as the image's user, then sets the modes a team would. */
const STAMP = 'echo "stamped by $HOSTNAME_ROLE job" >> /data/notes.txt && busybox chmod 640 /data/notes.txt && mkdir -p /data/reports && busybox chmod 750 /data/reports';

beforeAll(async () => {
  await Promise.all([ensureTestImages(runtime), ensureServiceImages()]);
  work = mkdtempSync(join(tmpdir(), 'svc-journey-month-'));
  host2 = mkdtempSync(join(tmpdir(), 'svc-journey-month-host2-'));
  s3 = await startS3Standin('svc-journey');
  port.shop = await freePort();
  port.preview = await freePort();
  repo = await createTestRepo('acme/shop');
  t = await startTestDaemon('jmonth', {
    ...serviceImageEnv(),
    SVC_CODEHOST_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SVC_PREVIEW_PORTS: String(port.preview),
    SVC_BACKUP_PASSPHRASE: PASSPHRASE,
    SVC_BACKUP_SCRYPT_WORK_FACTOR: '12',
  });
  token = t.token;
  url = t.url;
}, 600_000);

afterAll(async () => {
  await t?.close().catch(() => {});
  if (b && b.exitCode === null) {
    const gone = new Promise((r) => b!.once('exit', r));
    b.kill('SIGTERM');
    await gone;
  }
  if (bEnv.SVC_INSTANCE) await removeInstance(bEnv.SVC_INSTANCE, bEnv.SVC_NETWORK).catch(() => {});
  if (bEnv.SVC_DATA_DIR) await stopHelpersOf(bEnv.SVC_DATA_DIR).catch(() => {});
  await caddy2?.stop().catch(() => {});
  await s3?.stop().catch(() => {});
  await repo?.remove();
  for (const prefix of ['svc-build/shop', 'svc-build/shop-pr-1']) {
    for (const tag of await runtime.listImageTags(prefix).catch(() => [] as string[])) await runtime.removeImage(tag).catch(() => false);
  }
  for (const dir of [work, host2]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** JSON request with the admin's token to whichever daemon runs now (host A, then the restored one). */
async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : (text as any) };
}
const svc = (...args: string[]) => runSvc(args, { cwd: work, env: { SVC_URL: url, SVC_TOKEN: token } });
const page = async (p: number, path = '/') => {
  const res = await fetch(`http://127.0.0.1:${p}${path}`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined);
  return res?.ok ? res.text() : '';
};
const serving = (p: number, text: string, path = '/', timeoutMs = 60_000) => waitFor(async () => (await page(p, path)).includes(text), { timeoutMs, what: `port ${p}${path} to serve "${text}"` });
const finished = (id: number) => deployReaching({ api }, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 180_000);
const envOf = async () => parseEnv(await page(port.shop, '/cgi-bin/env'));

async function deliver(event: string, doc: unknown) {
  const body = JSON.stringify(doc);
  const res = await fetch(`${url}/api/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': `${event}-${Math.random()}`, 'x-hub-signature-256': signBody(WEBHOOK_SECRET, body) },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}
const push = async (sha: string) => {
  const res = await deliver('push', { ref: 'refs/heads/main', after: sha, deleted: false, repository: { full_name: 'acme/shop' } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.deploys[0] as number;
};
const pullRequest = (action: string, sha: string) =>
  deliver('pull_request', { action, number: 1, repository: { full_name: 'acme/shop' }, pull_request: { merged: false, head: { sha, ref: 'feature', repo: { full_name: 'acme/shop' } }, base: { ref: 'main' } } });

async function exec(container: string, cmd: string[], env: Record<string, string>) {
  const r = await runtime.exec(container, cmd, { env });
  if (r.exitCode !== 0) throw new Error(`${cmd[0]}: ${r.stderr}`);
  return r.stdout.trim();
}
async function psql(statement: string) {
  const s = (await api('GET', `/api/services/${ids.db}`)).body;
  const c = (await api('GET', `/api/services/${ids.db}/credentials`)).body;
  return exec(s.container_name, ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', statement], { PGPASSWORD: c.password });
}
async function redis(...args: string[]) {
  const s = (await api('GET', `/api/services/${ids.cache}`)).body;
  const c = (await api('GET', `/api/services/${ids.cache}/credentials`)).body;
  return exec(s.container_name, ['redis-cli', '-h', '127.0.0.1', ...args], { REDISCLI_AUTH: c.password });
}
const serviceActive = (id: number) => waitFor(async () => {
  const s = (await api('GET', `/api/services/${id}`)).body;
  if (s.status === 'error') throw new Error(s.error);
  return s.status === 'active' ? s : undefined;
}, { timeoutMs: 180_000, what: `service ${id} active` });
const runEnded = (runId: number) => waitFor(async () => {
  const r = (await api('GET', `/api/apps/${ids.shop}/runs/${runId}`)).body;
  return ['succeeded', 'failed', 'timed_out', 'cancelled', 'skipped'].includes(r.status) ? r : undefined;
}, { timeoutMs: 60_000, what: `run ${runId} to end` });
const statOf = (path: string) => {
  const s = statSync(path);
  return { uid: s.uid, gid: s.gid, mode: (s.mode & 0o7777).toString(8) };
};
const volumeOf = (dataDir: string) => join(dataDir, 'volumes', 'shop', 'data');

describe("journey: an app's month, from the first push to a restore on a fresh host", () => {
  it('a Postgres and a Redis start; the shop is created with a secret, both links, a volume and a job', async () => {
    const db = await api('POST', '/api/services', { name: 'shop-db', type: 'postgres' });
    const cache = await api('POST', '/api/services', { name: 'shop-cache', type: 'redis' });
    expect([db.status, cache.status]).toEqual([201, 201]);
    ids.db = db.body.id;
    ids.cache = cache.body.id;
    const app = await api('POST', '/api/apps', {
      name: 'shop', build_mode: 'svc_build', repo_url: repo.url, internal_port: 3000, access_mode: 'port', fallback_port: port.shop,
      volumes: [{ name: 'data', mount_path: '/data' }],
      jobs: [{ name: 'stamp', schedule: '@daily', command: STAMP }],
      previews: { enabled: true, env: { STAGE: 'preview' } },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    ids.shop = app.body.id;
    expect((await api('POST', `/api/apps/${ids.shop}/env`, { key: 'SHOP_SECRET', value: SHOP_SECRET, is_secret: true })).status).toBe(201);
    expect((await api('POST', `/api/apps/${ids.shop}/env`, { key: 'HOSTNAME_ROLE', value: 'primary' })).status).toBe(201);
    expect((await api('POST', `/api/apps/${ids.shop}/services`, { service_id: ids.db })).body.env_keys).toContain('SQLA_HOST');
    expect((await api('POST', `/api/apps/${ids.shop}/services`, { service_id: ids.cache })).body.env_keys).toContain('CACHE_HOST');
    before.dbContainer = (await serviceActive(ids.db)).container_name;
    before.cacheContainer = (await serviceActive(ids.cache)).container_name;
    const vols = await svc('volumes', 'shop');
    expect(vols.code, vols.stderr).toBe(0);
    expect(vols.stdout).toMatch(/VOLUME\s+MOUNT PATH\ndata\s+\/data\n/);
  });

  it('the first push is built and deployed; the shop serves with its secret and both links', async () => {
    const sha = await repo.commit(source('shop one'));
    const d = await finished(await push(sha));
    expect(d, JSON.stringify((await api('GET', `/api/deploys/${d.id}/events`)).body.filter((e: any) => e.level !== 'info'))).toMatchObject({ status: 'success', commit_sha: sha, trigger: 'webhook', image_ref: `svc-build/shop:${sha}` });
    await serving(port.shop, 'shop one');
    const env = await envOf();
    expect(env).toMatchObject({ SHOP_SECRET, SQLA_HOST: before.dbContainer, CACHE_HOST: before.cacheContainer });
  });

  it('the team writes data: a row in Postgres, a key in Redis, notes in the volume by the job (uid 1001)', async () => {
    await psql("CREATE TABLE orders (item text); INSERT INTO orders VALUES ('first order')");
    expect(await redis('SET', 'cart:42', 'two items')).toBe('OK');
    const ran = await svc('jobs', 'shop', '--run', 'stamp');
    expect(ran.code, ran.stderr).toBe(0);
    const runId = Number(/^run (\d+) of job stamp requested/.exec(ran.stdout)?.[1]);
    expect(runId, ran.stdout).toBeGreaterThan(0);
    expect(await runEnded(runId)).toMatchObject({ status: 'succeeded', exit_code: 0, trigger: 'manual' });
    await serving(port.shop, 'stamped by primary job', '/cgi-bin/notes');
    // On the host: the files are the app user's, with the modes it set.
    expect(statOf(join(volumeOf(t!.dataDir), 'notes.txt'))).toEqual({ uid: 1001, gid: 1001, mode: '640' });
    expect(statOf(join(volumeOf(t!.dataDir), 'reports'))).toEqual({ uid: 1001, gid: 1001, mode: '750' });
    const jobs = await svc('jobs', 'shop');
    expect(jobs.stdout).toMatch(/\nstamp\s+@daily\s+forbid\s+#\d+ succeeded \(exit 0\) /);
  });

  it('a second push replaces the first build blue/green; the data stays', async () => {
    const sha = await repo.commit({ 'index.html': '<h1>shop two</h1>\n' });
    expect((await finished(await push(sha))).status).toBe('success');
    await serving(port.shop, 'shop two');
    expect(await page(port.shop, '/cgi-bin/notes')).toContain('stamped by primary job');
    expect((await api('GET', `/api/apps/${ids.shop}/deploys`)).body.map((d: any) => [d.trigger, d.status])).toEqual([['webhook', 'success'], ['webhook', 'success']]);
  });

  it('a pull request opens a preview that serves its commit; closing it leaves nothing', async () => {
    const sha = await repo.commit({ 'index.html': '<h1>shop preview feature</h1>\n' }, 'feature');
    const opened = await pullRequest('opened', sha);
    expect(opened.status, JSON.stringify(opened.body)).toBe(202);
    expect((await finished(opened.body.previews[0].deploy)).status).toBe('success');
    await serving(port.preview, 'shop preview feature');
    expect(await page(port.shop)).toContain('shop two'); // production untouched
    const previews = (await api('GET', `/api/apps/${ids.shop}/previews`)).body;
    expect(previews).toMatchObject([{ pr_number: 1, app: 'shop-pr-1', head_sha: sha }]);
    const previewEnv = parseEnv(await page(port.preview, '/cgi-bin/env'));
    expect(previewEnv).toMatchObject({ STAGE: 'preview', SHOP_SECRET });
    expect(previewEnv.SQLA_HOST).toBeUndefined(); // previews.services defaults to none

    const closed = await pullRequest('closed', sha);
    expect(closed).toMatchObject({ status: 202, body: { previews: [{ removed: 'shop-pr-1' }] } });
    await waitFor(async () => (await page(port.preview)) === '' && (await api('GET', `/api/apps/${ids.shop}/previews`)).body.length === 0, { timeoutMs: 30_000, what: 'the preview gone' });
    expect((await api('GET', '/api/apps')).body.map((a: any) => a.name)).toEqual(['shop']);
  });

  it('a backup target is added with the CLI; a backup is copied to the bucket and verified', async () => {
    const added = await runSvc(['target', 'add', 'offsite', '--bucket', s3.bucket, '--endpoint', s3.endpoint, '--region', s3.region, '--prefix', 'shop/'], {
      cwd: work, env: { SVC_URL: url, SVC_TOKEN: token, AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey },
    });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`backup target offsite added (s3://${s3.bucket}/shop/)`);
    const tested = await svc('target', 'test', 'offsite');
    expect(tested.code, tested.stderr).toBe(0);
    const made = await svc('backup', 'create');
    expect(made.code, made.stderr).toBe(0);
    const id = Number(/backup (\d+) completed/.exec(made.stdout)?.[1]);
    const verified = await waitFor(async () => {
      const row = (await api('GET', `/api/backups/${id}`)).body;
      return row.remote_status === 'verified' ? row : undefined;
    }, { timeoutMs: 60_000, what: 'the copy verified' });
    expect(verified.remote).toMatchObject({ target: 'offsite', key: `shop/${verified.filename}.age` });
    const remote = await svc('target', 'remote', 'offsite');
    expect(remote.stdout).toContain(`shop/${verified.filename}.age`);
  });

  it('the host is lost: daemon, containers, network, Caddy and data directory', async () => {
    before.deploys = (await api('GET', `/api/apps/${ids.shop}/deploys`)).body;
    before.secretHistory = (await api('GET', `/api/apps/${ids.shop}/env/SHOP_SECRET/history`)).body;
    before.runs = (await api('GET', `/api/apps/${ids.shop}/jobs/stamp/runs`)).body;
    before.auditIds = ((await api('GET', '/api/audit?limit=500')).body as any[]).map((r) => r.id);
    const dataDir = t!.dataDir;
    await t!.close();
    t = undefined;
    expect(existsSync(dataDir)).toBe(false);
    expect(await page(port.shop)).toBe('');
  });

  it('svc restore s3://... --latest on a fresh directory restores from the bucket alone', async () => {
    const out = await runSvc(['restore', `s3://${s3.bucket}/shop/`, '--latest'], {
      cwd: host2,
      env: {
        SVC_DATA_DIR: join(host2, 'data'),
        SVC_URL: `http://127.0.0.1:${await freePort()}`,
        SVC_BACKUP_S3_ENDPOINT: s3.endpoint, SVC_BACKUP_S3_REGION: s3.region,
        AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey, SVC_BACKUP_PASSPHRASE: PASSPHRASE,
      },
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/shop\/svc-backup-\d{8}-\d{6}\.tar\.gz\.age/);
    expect(out.stdout).toContain('svc.db restored');
    bEnv = parseEnv(await readFile(join(host2, '.env'), 'utf8')) as Record<string, string>;
    expect(bEnv.SVC_DATA_DIR).toBe(join(host2, 'data'));
    expect(bEnv.SVC_BACKUP_PASSPHRASE).toBeUndefined();

    caddy2 = await startCaddy();
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    b = spawn(process.execPath, ['--import', tsx, join(ROOT, 'src/cli.ts'), 'serve'], {
      cwd: host2,
      env: { PATH: process.env.PATH, HOME: host2, SVC_PROXY_ADMIN_URL: caddy2.adminUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    b.stdout!.on('data', (d: Buffer) => (bOut = (bOut + d).slice(-20_000)));
    b.stderr!.on('data', (d: Buffer) => (bOut = (bOut + d).slice(-20_000)));
    url = `http://127.0.0.1:${bEnv.SVC_PORT}`;
    await waitFor(async () => {
      if (b!.exitCode !== null) throw new Error(`restored daemon exited: ${bOut}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined))?.ok;
    }, { timeoutMs: 60_000, what: 'the restored daemon to listen' });
  });

  it('on the fresh host the shop serves its last build with its secret and links; the old token works', async () => {
    const apps = await svc('apps');
    expect(apps.code, apps.stderr).toBe(0);
    expect(apps.stdout).toMatch(/\nshop\s/);
    await serving(port.shop, 'shop two', '/', 120_000);
    const env = await envOf();
    expect(env).toMatchObject({ SHOP_SECRET, SQLA_HOST: before.dbContainer, CACHE_HOST: before.cacheContainer });
    expect((await api('GET', `/api/apps/${ids.shop}/env/SHOP_SECRET/reveal`)).body.value).toBe(SHOP_SECRET);
  });

  it('the data is back: the Postgres row and the Redis key', async () => {
    await serviceActive(ids.db);
    await serviceActive(ids.cache);
    expect(await waitFor(() => psql('SELECT item FROM orders'), { timeoutMs: 60_000, what: 'the row' })).toBe('first order');
    expect(await waitFor(() => redis('GET', 'cart:42'), { timeoutMs: 60_000, what: 'the key' })).toBe('two items');
  });

  it('the history is back: deploys, the secret history, job runs and the audit log', async () => {
    const deploys = (await api('GET', `/api/apps/${ids.shop}/deploys`)).body as any[];
    const key = (d: any) => [d.id, d.commit_sha, d.image_ref, d.trigger, d.status];
    expect(deploys.map(key)).toEqual(before.deploys!.map(key));
    expect((await api('GET', `/api/apps/${ids.shop}/env/SHOP_SECRET/history`)).body).toEqual(before.secretHistory);
    expect((await api('GET', `/api/apps/${ids.shop}/jobs/stamp/runs`)).body.map((r: any) => [r.id, r.status])).toEqual(before.runs!.map((r: any) => [r.id, r.status]));
    const audit = ((await api('GET', '/api/audit?limit=500')).body as any[]).map((r) => r.id);
    expect(audit).toEqual(expect.arrayContaining(before.auditIds!));
  });

  // Issue 35 item 1: the restore gives back each file's numeric owner, group and mode.
  it("the volume's files keep their owner and mode, and the app (uid 1001) reads and writes them again", async () => {
    const vol = volumeOf(join(host2, 'data'));
    expect(statOf(join(vol, 'notes.txt'))).toEqual({ uid: 1001, gid: 1001, mode: '640' });
    expect(statOf(join(vol, 'reports'))).toEqual({ uid: 1001, gid: 1001, mode: '750' });
    await serving(port.shop, 'stamped by primary job', '/cgi-bin/notes', 30_000);
    const ran = await svc('jobs', 'shop', '--run', 'stamp');
    expect(ran.code, ran.stderr).toBe(0);
    const runId = Number(/^run (\d+) of job stamp requested/.exec(ran.stdout)?.[1]);
    const run = await runEnded(runId);
    expect(run.status, run.output).toBe('succeeded');
    expect((await page(port.shop, '/cgi-bin/notes')).match(/stamped by primary job/g)).toHaveLength(2);
  });
});
