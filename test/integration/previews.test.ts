// Pull-request previews end to end (issue 20): signed pull_request deliveries for a local file:// repository,
// the preview built by the real engine and served by the real Caddy on a port of SVC_PREVIEW_PORTS;
// synchronize serves the new commit; close leaves nothing: containers, images, rows, the listener.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { signBody } from '../../src/codehost/signature.js';
import { freePort } from '../support/caddy.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { deployReaching, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages } from '../support/images.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { waitFor } from '../support/wait.js';

const SECRET = 'previews-test-secret';
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let repo: TestRepo | undefined;
let previewPort: number;
const PREVIEW = 'pv-site-pr-1';

beforeAll(async () => {
  await ensureTestImages(runtime);
  const caddyImage = await ensureCaddyImage();
  previewPort = await freePort();
  t = await startTestDaemon('previews', { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_BUILD_IMAGE_STATIC: caddyImage, SVC_PREVIEW_PORTS: `${previewPort}` });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await repo?.remove();
  // Whatever a failed run left: the images built for the preview.
  for (const tag of await runtime.listImageTags(`svc-build/${PREVIEW}`).catch(() => [] as string[])) await runtime.removeImage(tag).catch(() => false);
});

const deliver = async (action: string, sha: string, headRepo = 'acme/pv-site') => {
  const body = JSON.stringify({
    action, number: 1, repository: { full_name: 'acme/pv-site' },
    pull_request: { merged: false, head: { sha, ref: 'feature', repo: { full_name: headRepo } }, base: { ref: 'main' } },
  });
  const res = await fetch(`${t.url}/api/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': `pr-${action}-${sha}-${Math.random()}`, 'x-hub-signature-256': signBody(SECRET, body) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const finished = (id: number) => deployReaching(t, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 90_000);
const get = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3_000) })).text();
const refused = async (port: number) => get(port).then(() => false, () => true);
const containers = () => runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: t.instance, [LABELS.app]: PREVIEW });
const images = async () => (await runtime.docker.listImages({ filters: { reference: [`svc-build/${PREVIEW}`] } })).flatMap((i) => i.RepoTags ?? []);

describe('pull request previews', () => {
  it('open -> the preview serves its commit; synchronize -> the new commit; close -> nothing left; a fork is ignored', async () => {
    repo = await createTestRepo('acme/pv-site');
    await repo.commit({ 'index.html': '<h1>production</h1>' });
    const parent = await t.api('POST', '/api/apps', {
      name: 'pv-site', build_mode: 'svc_build', repo_url: repo.url, access_mode: 'port', fallback_port: await freePort(),
      previews: { enabled: true, env: { STAGE: 'preview' } },
    });
    expect(parent.status, JSON.stringify(parent.body)).toBe(201);

    const sha1 = await repo.commit({ 'index.html': '<h1>pull request one</h1>' }, 'feature');
    const fork = await deliver('opened', sha1, 'mallory/pv-site');
    expect(fork).toMatchObject({ status: 200, body: { ignored: expect.stringMatching(/fork/) } });

    let started = Date.now();
    const opened = await deliver('opened', sha1);
    expect(opened.status, JSON.stringify(opened.body)).toBe(202);
    expect((await finished(opened.body.previews[0].deploy)).status).toBe('success');
    await waitFor(async () => (await get(previewPort)).includes('pull request one'), { what: 'the preview to serve its commit' });
    const openMs = Date.now() - started;

    const sha2 = await repo.commit({ 'index.html': '<h1>pull request two</h1>' }, 'feature');
    started = Date.now();
    const sync = await deliver('synchronize', sha2);
    expect(sync.status).toBe(202);
    expect((await finished(sync.body.previews[0].deploy)).status).toBe('success');
    await waitFor(async () => (await get(previewPort)).includes('pull request two'), { what: 'the preview to serve the new commit' });
    const syncMs = Date.now() - started;
    expect(await get(previewPort)).toContain('pull request two');

    // Before close: the preview's container(s), its two built images, its row.
    expect((await containers()).length).toBeGreaterThan(0);
    expect((await images()).sort()).toEqual([`svc-build/${PREVIEW}:${sha1}`, `svc-build/${PREVIEW}:${sha2}`].sort());
    expect((await t.api('GET', `/api/apps/${parent.body.id}/previews`)).body).toMatchObject([{ pr_number: 1, app: PREVIEW, head_sha: sha2 }]);

    started = Date.now();
    const closed = await deliver('closed', sha2);
    expect(closed).toMatchObject({ status: 202, body: { previews: [{ removed: PREVIEW }] } });
    await waitFor(async () => (await containers()).length === 0 && (await images()).length === 0 && (await refused(previewPort)), { timeoutMs: 30_000, what: 'nothing of the preview left' });
    const closeMs = Date.now() - started;
    expect((await t.api('GET', `/api/apps/${parent.body.id}/previews`)).body).toEqual([]);
    expect((await readdir(join(t.dataDir, 'builds')).catch(() => [] as string[])).filter((e) => e.startsWith(PREVIEW))).toEqual([]);
    expect((await t.api('GET', '/api/apps')).body.map((a: { name: string }) => a.name)).toEqual(['pv-site']);
    console.log(`previews: open->serving ${openMs} ms, synchronize->serving ${syncMs} ms, close->nothing left ${closeMs} ms`);
    expect((await t.api('DELETE', `/api/apps/${parent.body.id}`)).status).toBe(204);
  }, 150_000);
});
