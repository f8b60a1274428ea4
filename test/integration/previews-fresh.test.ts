// A preview with its own empty database, reported on the pull request (issue 20): a `svc_build` app (a root
// Dockerfile FROM the local engines image: node answers with its commit and the tables its database has)
// linked to a real Postgres (the test stand-in image); a pull request on the local code host of the suite
// opens a preview that serves its own commit and its own EMPTY database (`services: "fresh"`), one comment
// is posted on the pull request and then edited; after close nothing of the preview is left. Containers,
// networks, data directories, Caddy's routes, DNS answers and images are listed before and after.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { signBody } from '../../src/codehost/signature.js';
import { resolveA } from '../../src/dns/query.js';
import { appDnsName } from '../../src/proxy/proxy.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { startFakeCodehost, type FakeCodehost } from '../support/codehost-server.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { sql } from '../support/backup-sql.js';
import { ensureServiceImages, ENGINES_BASE_IMAGE, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';
import { adminFetch } from '../support/admin-fetch.js';

const SECRET = 'previews-fresh-secret';
const PARENT = 'pvdb';
const PREVIEW = 'pvdb-pr-1';
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let fake: FakeCodehost;
let repo: TestRepo | undefined;
let previewPort: number;
let dnsPort: number;
let keyDir: string | undefined;

// node answers `commit <VERSION> tables=<public tables of its database>` (psql with the linked DB_* variables).
const SERVER = `const http = require('http');
const { execFile } = require('child_process');
const fs = require('fs');
http.createServer((req, res) => {
  const version = fs.readFileSync(__dirname + '/VERSION', 'utf8').trim();
  const env = { ...process.env, PGHOST: process.env.DB_HOST, PGPORT: process.env.DB_PORT, PGDATABASE: process.env.DB_DB, PGUSER: process.env.DB_USER, PGPASSWORD: process.env.DB_PASSWORD };
  execFile('psql', ['-tAc', "select coalesce(string_agg(tablename, ',' order by tablename), 'none') from pg_tables where schemaname = 'public'"], { env, timeout: 5000 }, (err, out, errOut) => {
    res.end('commit ' + version + ' tables=' + (err ? 'error: ' + String(errOut || err.message).trim() : out.trim()) + '\\n');
  });
}).listen(3000);
`;
const DOCKERFILE = `FROM ${ENGINES_BASE_IMAGE}\nWORKDIR /app\nCOPY server.js VERSION /app/\nCMD ["node", "/app/server.js"]\n`;

beforeAll(async () => {
  await ensureServiceImages();
  fake = await startFakeCodehost();
  fake.installations[0].repositories.push('acme/pvdb');
  previewPort = await freePort();
  dnsPort = await freePort();
  keyDir = await mkdtemp(join(tmpdir(), 'svc-test-pvdb-key-'));
  await writeFile(join(keyDir, 'app.pem'), fake.app.pem, { mode: 0o600 });
  t = await startTestDaemon('previews-fresh', {
    ...serviceImageEnv(),
    SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: `${previewPort}`, SVC_DNS_PORT: `${dnsPort}`,
    SVC_CODEHOST_API_URL: fake.url, SVC_CODEHOST_APP_ID: String(fake.app.id), SVC_CODEHOST_APP_PRIVATE_KEY: join(keyDir, 'app.pem'),
  });
}, 180_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
  await repo?.remove();
  if (keyDir) await rm(keyDir, { recursive: true, force: true });
  for (const name of [PARENT, PREVIEW]) {
    for (const tag of await runtime.listImageTags(`svc-build/${name}`).catch(() => [] as string[])) await runtime.removeImage(tag).catch(() => false);
  }
});

const deliver = async (action: string, sha: string) => {
  const body = JSON.stringify({
    action, number: 1, repository: { full_name: 'acme/pvdb' },
    pull_request: { head: { sha, ref: 'feature', repo: { full_name: 'acme/pvdb' } }, base: { ref: 'main' } },
  });
  const res = await fetch(`${t.url}/api/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': `pvdb-${action}-${sha}`, 'x-hub-signature-256': signBody(SECRET, body) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const finished = (id: number) => deployReaching(t, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 120_000);
const get = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(8_000) })).text();
const serving = (port: number, want: string) =>
  waitFor(async () => {
    const text = await get(port).catch(() => '');
    return text.includes(want) ? text : undefined;
  }, { timeoutMs: 60_000, what: `port ${port} to answer ${want}` });

/** Everything of this daemon a preview could leave behind, as sorted lists. */
async function inventory() {
  const tree = async (dir: string) => {
    const out: string[] = [];
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      out.push(e.name);
      if (e.isDirectory()) for (const f of await readdir(join(dir, e.name)).catch(() => [] as string[])) out.push(`${e.name}/${f}`);
    }
    return out.sort();
  };
  const caddy = await (await adminFetch(`${t.caddy.adminUrl}/config/apps/http/servers`)).json();
  const images = (await runtime.docker.listImages({ filters: { reference: ['svc-build/*'] } })).flatMap((i) => i.RepoTags ?? []).filter((r) => r.startsWith(`svc-build/${PARENT}`));
  return {
    containers: (await runtime.list({ [LABELS.instance]: t.instance })).map((c) => c.name).sort(),
    networks: (await runtime.docker.listNetworks()).map((n) => n.Name).filter((n) => n.includes(t.network) || n.includes(PARENT)).sort(),
    dataDirs: { services: await tree(join(t.dataDir, 'services')), builds: await tree(join(t.dataDir, 'builds')), volumes: await tree(join(t.dataDir, 'volumes')) },
    routes: JSON.stringify(caddy),
    dnsFiles: await tree(join(t.dataDir, 'proxy', 'dns')),
    dnsPreview: await resolveA(dnsPort, appDnsName(PREVIEW), 1_000),
    images: images.sort(),
    services: ((await t.api('GET', '/api/services')).body as { name: string }[]).map((s) => s.name).sort(),
    apps: ((await t.api('GET', '/api/apps')).body as { name: string }[]).map((a) => a.name).sort(),
  };
}

describe('a preview with a fresh database, reported on the pull request', () => {
  it('serves its own commit and its own empty database; one comment, edited; nothing left after close', async () => {
    repo = await createTestRepo('acme/pvdb');
    await repo.commit({ Dockerfile: DOCKERFILE, 'server.js': SERVER, VERSION: 'production' });
    const db = await sql(t, 'pvdb-db', 'postgres');
    await db.run("CREATE TABLE items (name text); INSERT INTO items VALUES ('parent-row')");
    const parentPort = await freePort();
    const parent = await t.api('POST', '/api/apps', {
      name: PARENT, build_mode: 'svc_build', repo_url: repo.url, internal_port: 3000, access_mode: 'port', fallback_port: parentPort,
      previews: { enabled: true, services: 'fresh' },
    });
    expect(parent.status, JSON.stringify(parent.body)).toBe(201);
    expect((await t.api('POST', `/api/apps/${parent.body.id}/services`, { service_id: db.id, alias: 'DB' })).status).toBe(201);
    const first = await t.api('POST', `/api/apps/${parent.body.id}/deploys`, {});
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect((await finished(first.body.id)).status).toBe('success');
    await serving(parentPort, 'commit production tables=items');

    const before = await inventory();
    expect(before.dnsPreview).toBeUndefined();

    const sha1 = await repo.commit({ VERSION: 'feature-one' }, 'feature');
    const opened = await deliver('opened', sha1);
    expect(opened.status, JSON.stringify(opened.body)).toBe(202);
    expect((await finished(opened.body.previews[0].deploy)).status).toBe('success');
    // Its own commit and its own, empty, database; the parent still has its table.
    await serving(previewPort, 'commit feature-one tables=none');
    expect(await get(parentPort)).toContain('commit production tables=items');

    const during = await inventory();
    expect(during.services).toEqual(['pvdb-db', 'pvdb-pr-1-pvdb-db']);
    expect(during.containers.filter((c) => !before.containers.includes(c)).length).toBeGreaterThanOrEqual(2);
    expect(during.dataDirs.services).toContain('pvdb-pr-1-pvdb-db');
    expect(during.dnsPreview).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(during.routes).not.toBe(before.routes);
    expect(during.images).toContain(`svc-build/${PREVIEW}:${sha1}`);

    // One comment, ready, with the preview's address.
    await waitFor(() => fake.comments.length === 1 && fake.comments[0].body.includes('Ready'), { timeoutMs: 20_000, what: 'the ready comment' });
    expect(fake.comments[0]).toMatchObject({ repo: 'acme/pvdb', number: 1 });
    expect(fake.comments[0].body).toContain(`:${previewPort}`);

    // A new commit: the same comment is edited, the preview's database stays its own.
    const sha2 = await repo.commit({ VERSION: 'feature-two' }, 'feature');
    const sync = await deliver('synchronize', sha2);
    expect((await finished(sync.body.previews[0].deploy)).status).toBe('success');
    await serving(previewPort, 'commit feature-two tables=none');
    await waitFor(() => fake.comments[0].body.includes(sha2.slice(0, 12)) && fake.comments[0].body.includes('Ready'), { timeoutMs: 20_000, what: 'the comment edited' });

    const closed = await deliver('closed', sha2);
    expect(closed).toMatchObject({ status: 202, body: { previews: [{ removed: PREVIEW }] } });
    const after = await waitFor(async () => {
      const now = await inventory();
      return JSON.stringify(now) === JSON.stringify(before) ? now : undefined;
    }, { timeoutMs: 60_000, what: 'nothing of the preview left' }).catch(async (err) => {
      expect(await inventory()).toEqual(before);
      throw err;
    });
    expect(after).toEqual(before);
    await waitFor(() => fake.comments[0].body.includes('Removed'), { timeoutMs: 20_000, what: 'the removal comment' });
    expect(fake.comments).toHaveLength(1);
    expect(fake.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'))).toHaveLength(1);
    expect(await get(parentPort)).toContain('commit production tables=items');
    expect((await t.api('DELETE', `/api/apps/${parent.body.id}`)).status).toBe(204);
  }, 300_000);
});
