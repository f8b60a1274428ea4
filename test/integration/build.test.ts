// svc_build end to end: signed `push` deliveries for local file:// repositories, built by the real engine
// and deployed blue/green behind the real Caddy. A static site (generated Dockerfile on a local
// caddy image), a Dockerfile repository, a manual deploy of the branch head, a provider that cannot
// plan, a failing build and a rebuild of a commit already built.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { signBody } from '../../src/codehost/signature.js';
import { freePort } from '../support/caddy.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { waitFor } from '../support/wait.js';

const SECRET = 'build-test-secret';
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
const repos: TestRepo[] = [];
const images: string[] = [];

beforeAll(async () => {
  await ensureTestImages(runtime);
  const caddyImage = await ensureCaddyImage();
  t = await startTestDaemon('build', { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_BUILD_IMAGE_STATIC: caddyImage });
}, 120_000);
afterAll(async () => {
  await t?.close();
  for (const r of repos) await r.remove();
  for (const i of images) await runtime.docker.getImage(i).remove({ force: true }).catch(() => {});
});

const FINAL = ['success', 'failed', 'auto_rollback', 'cancelled'];
const finished = (id: number) =>
  waitFor(async () => {
    const d = (await t.api('GET', `/api/deploys/${id}`)).body;
    return FINAL.includes(d.status) ? d : undefined;
  }, { timeoutMs: 90_000, what: `deploy ${id} to finish` });
const events = async (id: number) => (await t.api('GET', `/api/deploys/${id}/events`)).body as { step: string; level: string; message: string }[];
const get = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) })).text();

async function repo(name: string) {
  const r = await createTestRepo(name);
  repos.push(r);
  return r;
}

async function app(name: string, repoUrl: string, extra: Record<string, unknown> = {}) {
  const port = await freePort();
  const res = await t.api('POST', '/api/apps', { name, build_mode: 'svc_build', repo_url: repoUrl, access_mode: 'port', fallback_port: port, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as number, port };
}

async function push(fullName: string, sha: string, branch = 'main') {
  const body = JSON.stringify({ ref: `refs/heads/${branch}`, after: sha, deleted: false, repository: { full_name: fullName } });
  const res = await fetch(`${t.url}/api/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': `d-${sha}-${Math.random()}`, 'x-hub-signature-256': signBody(SECRET, body) },
    body,
  });
  const json = (await res.json()) as { deploys: number[] };
  expect(res.status, JSON.stringify(json)).toBe(202);
  return json.deploys[0];
}

describe('building from source', () => {
  it('push of a static site: clone, build, deploy on the provider port, served through Caddy', async () => {
    const r = await repo('acme/bk-static');
    const sha = await r.commit({ 'index.html': '<h1>static one</h1>' });
    const a = await app('bk-static', r.url);
    const id = await push('Acme/BK-Static', sha);
    const d = await finished(id);
    images.push(`svc-build/bk-static:${sha}`);
    const ev = await events(id);
    expect(d.status, JSON.stringify(ev.filter((e) => e.level !== 'info'))).toBe('success');
    expect(d).toMatchObject({ commit_sha: sha, image_ref: `svc-build/bk-static:${sha}`, trigger: 'webhook' });
    const steps = ev.map((e) => e.step).filter((s, i, all) => s !== all[i - 1]);
    expect(steps).toEqual(['start', 'clone', 'build', 'pull', 'start', 'health_check', 'route_update', 'stop_old', 'finalize']);
    expect(ev.find((e) => e.step === 'build')!.message).toMatch(/provider static: detected static from index.html/);
    expect((await t.api('GET', `/api/apps/${a.id}`)).body).toMatchObject({ internal_port: 80, image_ref: `svc-build/bk-static:${sha}` });
    await waitFor(async () => (await get(a.port)).includes('static one'), { what: 'the static site to be served' });

    // A second commit replaces it; redeploying a commit already built does not rebuild.
    const sha2 = await r.commit({ 'index.html': '<h1>static two</h1>' });
    images.push(`svc-build/bk-static:${sha2}`);
    expect((await finished(await push('acme/bk-static', sha2))).status).toBe('success');
    await waitFor(async () => (await get(a.port)).includes('static two'), { what: 'the second version' });
    const again = await t.api('POST', `/api/apps/${a.id}/deploys`, { commit_sha: sha });
    expect(again.status).toBe(202);
    expect((await finished(again.body.id)).status).toBe('success');
    expect((await events(again.body.id)).some((e) => e.step === 'build' && /already built/.test(e.message))).toBe(true);
    await waitFor(async () => (await get(a.port)).includes('static one'), { what: 'the first version again' });
  }, 180_000);

  // Issue 35 defect 2: a rollback skipped the build steps, so it never learnt the provider's port and probed
  // the spec's 3000 while the static site listened on 80 ("no HTTP answer", auto_rollback). A rollback now
  // runs what the rolled-back deploy ran: its image, its port and its environment snapshot.
  it('rolling a static site back to its first build serves the first build on port 80 with that deploy\'s environment', async () => {
    const r = await repo('acme/bk-rollback');
    const a = await app('bk-rollback', r.url);
    const env = (key: string, value: string) => t.api('POST', `/api/apps/${a.id}/env`, { key, value });
    expect((await env('GREETING', 'first')).status).toBeLessThan(300);
    const sha1 = await r.commit({ 'index.html': '<h1>rollback one</h1>' });
    images.push(`svc-build/bk-rollback:${sha1}`);
    const first = await finished(await push('acme/bk-rollback', sha1));
    expect(first.status).toBe('success');
    expect((await env('GREETING', 'second')).status).toBeLessThan(300);
    const sha2 = await r.commit({ 'index.html': '<h1>rollback two</h1>' });
    images.push(`svc-build/bk-rollback:${sha2}`);
    expect((await finished(await push('acme/bk-rollback', sha2))).status).toBe('success');
    await waitFor(async () => (await get(a.port)).includes('rollback two'), { what: 'the second build' });

    const res = await t.api('POST', `/api/apps/${a.id}/deploys/rollback`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const back = await finished(res.body.id);
    expect(back.status, JSON.stringify((await events(back.id)).filter((e) => e.level !== 'info'))).toBe('success');
    expect(back).toMatchObject({ trigger: 'rollback', image_ref: `svc-build/bk-rollback:${sha1}`, commit_sha: sha1 });
    expect((await events(back.id)).some((e) => e.step === 'build' || e.step === 'clone')).toBe(false);
    await waitFor(async () => (await get(a.port)).includes('rollback one'), { what: 'the first build again' });
    const shown = (await t.api('GET', `/api/apps/${a.id}`)).body;
    expect(shown).toMatchObject({ internal_port: 80, image_ref: `svc-build/bk-rollback:${sha1}`, status: 'active', config_changed: true });
    const live = await runtime.docker.getContainer(shown.live_container_name).inspect();
    expect(live.Config.Env).toContain('GREETING=first');
    expect(live.Config.Env).not.toContain('GREETING=second');
    expect((await t.api('DELETE', `/api/apps/${a.id}`)).status).toBe(204);
  }, 240_000);

  // Issue 17 section 2, the defect: the pipeline wrote the provider's port (80) into the app's spec, and the
  // next apply of a manifest without internal_port "corrected" it to the API default 3000, so the route
  // pointed at a port nothing listened on. The provider's port is now an observed fact the route uses.
  it('a manifest-declared static site built on port 80: re-applying the manifest changes nothing and the site keeps being served', async () => {
    const r = await repo('acme/bk-manifest');
    const sha = await r.commit({ 'index.html': '<h1>from a manifest</h1>' });
    const port = await freePort();
    const doc = `apiVersion: svc/v1\nkind: App\nmetadata: {name: bk-manifest}\nspec:\n  build_mode: svc_build\n  repo_url: ${r.url}\n  access_mode: port\n  fallback_port: ${port}\n`;
    const apply = () => t.api('POST', '/api/manifests/apply', { content: doc });
    const first = await apply();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.resources).toMatchObject([{ kind: 'App', name: 'bk-manifest', action: 'create' }]);
    const id = (await t.api('GET', '/api/apps')).body.find((x: { name: string }) => x.name === 'bk-manifest').id as number;
    images.push(`svc-build/bk-manifest:${sha}`);
    expect((await finished(await push('acme/bk-manifest', sha))).status).toBe('success');
    await waitFor(async () => (await get(port)).includes('from a manifest'), { what: 'the manifest app to be served' });
    expect((await t.api('GET', `/api/apps/${id}`)).body.internal_port).toBe(80);

    const again = await apply();
    expect(again.body.resources).toMatchObject([{ kind: 'App', name: 'bk-manifest', action: 'unchanged', changes: [] }]);
    // Nothing was written, so nothing re-routes: the route keeps the observed port 80.
    expect((await t.api('GET', `/api/apps/${id}`)).body).toMatchObject({ internal_port: 80, status: 'active' });
    expect(await get(port)).toContain('from a manifest');
    expect((await t.api('DELETE', `/api/apps/${id}`)).status).toBe(204);
  }, 120_000);

  it('a Dockerfile repository is built as it is; a manual deploy builds the branch head', async () => {
    const r = await repo('acme/bk-docker');
    const sha = await r.commit({ Dockerfile: `FROM ${WEB_V1}\nCOPY index.html /www/index.html\n`, 'index.html': 'from the dockerfile repo' });
    const a = await app('bk-docker', r.url, { internal_port: 3000, project_type: 'go' });
    const res = await t.api('POST', `/api/apps/${a.id}/deploys`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const d = await finished(res.body.id);
    images.push(`svc-build/bk-docker:${sha}`);
    expect(d.status, JSON.stringify(await events(res.body.id))).toBe('success');
    expect(d.commit_sha).toBe(sha);
    expect((await events(res.body.id)).some((e) => e.step === 'build' && /Dockerfile found/.test(e.message))).toBe(true);
    expect((await t.api('GET', `/api/apps/${a.id}`)).body.internal_port).toBe(3000);
    await waitFor(async () => (await get(a.port)).includes('from the dockerfile repo'), { what: 'the Dockerfile build to be served' });
  }, 120_000);

  it('fails at the right step with the old version serving: no plan, failing build, unknown commit', async () => {
    const r = await repo('acme/bk-fail');
    const good = await r.commit({ Dockerfile: `FROM ${WEB_V1}\n` });
    const a = await app('bk-fail', r.url, { internal_port: 3000 });
    images.push(`svc-build/bk-fail:${good}`);
    expect((await finished(await push('acme/bk-fail', good))).status).toBe('success');

    const noPlan = await r.commit({ Dockerfile: null, 'README.md': 'no go.mod' });
    await t.api('PUT', `/api/apps/${a.id}`, { project_type: 'go' });
    const d1 = await finished(await push('acme/bk-fail', noPlan));
    expect(d1.status).toBe('failed');
    expect((await events(d1.id)).at(-1)).toMatchObject({ step: 'build', level: 'error', message: 'project type go needs go.mod in the repository root' });

    const broken = await r.commit({ Dockerfile: 'FROM svc-test/does-not-exist:v0\n' });
    const d2 = await finished(await push('acme/bk-fail', broken));
    expect(d2.status).toBe('failed');
    expect((await events(d2.id)).at(-1)).toMatchObject({ step: 'build', level: 'error' });
    expect(d2.error).toMatch(/build failed/);

    const d3 = await finished(await push('acme/bk-fail', 'e'.repeat(40)));
    expect(d3.status).toBe('failed');
    expect((await events(d3.id)).at(-1)).toMatchObject({ step: 'clone', level: 'error' });

    await waitFor(async () => (await get(a.port)).includes('svc-test web v1'), { what: 'the first version to keep serving' });
  }, 180_000);
});
