// Code hosts beyond GitHub end to end (issue 20): for GitLab, Gitea and Forgejo, a push delivery builds the
// app with the real engine, a pull/merge request opens a preview that is built and then removed, and a bad
// proof is 401. The GitLab repository is private on a local smart-HTTP code host (git http-backend behind a
// Basic-auth check): the clone must carry the app's repo_token as a header, never in the URL or an event.
// Gitea and Forgejo use local file:// repositories. Each delivery is the host's published example with the
// commit ids (and, for previews, the repository and branches) replaced by the test repository's.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { deployReaching, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages } from '../support/images.js';
import { createTestRepo, type TestRepo } from '../support/git-repo.js';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.js';
import { waitFor } from '../support/wait.js';

const SECRET = 'codehosts-test-secret';
const TOKEN = 'glpat-codehosts-test-0123456789';
const runtime = createDockerRuntime({ log: silentLogger });
const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8'));
let t: TestDaemon;
let previewPort: number;
const repos: TestRepo[] = [];
let gitServer: GitHttpServer | undefined;
const built = new Set<string>();
let n = 0;

beforeAll(async () => {
  await ensureTestImages(runtime);
  const caddyImage = await ensureCaddyImage();
  previewPort = await freePort();
  t = await startTestDaemon('codehosts', { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_BUILD_IMAGE_STATIC: caddyImage, SVC_PREVIEW_PORTS: `${previewPort}` });
}, 120_000);
afterAll(async () => {
  for (const a of (await t?.api('GET', '/api/apps'))?.body ?? []) await t.api('DELETE', `/api/apps/${a.id}`);
  await t?.close();
  await gitServer?.close();
  for (const r of repos) await r.remove();
  for (const app of built) for (const tag of await runtime.listImageTags(`svc-build/${app}`).catch(() => [] as string[])) await runtime.removeImage(tag).catch(() => false);
});

async function repoFor(fullName: string, branch: string) {
  const repo = await createTestRepo(fullName);
  repos.push(repo);
  await repo.commit({ 'index.html': `<h1>${fullName} ${branch}</h1>` });
  if (branch !== 'main') await repo.commit({ 'index.html': `<h1>${fullName} ${branch}</h1>` }, branch);
  return repo;
}

async function send(path: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
const gitlab = (event: string, doc: unknown, token = SECRET) =>
  send('/api/webhooks/gitlab', JSON.stringify(doc), { 'x-gitlab-event': event, 'x-gitlab-token': token, 'idempotency-key': `gl-${++n}` });
const gitea = (host: 'gitea' | 'forgejo', event: string, doc: unknown, secret = SECRET) => {
  const body = JSON.stringify(doc);
  return send(`/api/webhooks/${host}`, body, { [`x-${host}-event`]: event, [`x-${host}-delivery`]: `gt-${++n}`, [`x-${host}-signature`]: createHmac('sha256', secret).update(body).digest('hex') });
};

const finished = (id: number) => deployReaching(t, id, (d) => ['success', 'failed', 'auto_rollback', 'cancelled'].includes(d.status), 'to finish', 90_000);
const get = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3_000) })).text();
const refused = async (port: number) => get(port).then(() => false, () => true);

async function createApp(body: Record<string, unknown>) {
  const res = await t.api('POST', '/api/apps', { access_mode: 'port', fallback_port: await freePort(), build_mode: 'svc_build', previews: { enabled: true }, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  built.add(body.name as string);
  return res.body as { id: number; name: string; fallback_port: number };
}

/** The preview of `app` opened by `open` serves its commit; `close` leaves nothing of it. */
async function previewRoundTrip(app: string, open: () => Promise<{ status: number; body: Record<string, any> }>, close: () => Promise<{ status: number; body: Record<string, any> }>, text: string) {
  built.add(`${app}-pr-1`).add(`${app}-pr-2`);
  const opened = await open();
  expect(opened.status, JSON.stringify(opened.body)).toBe(202);
  const deploy = await finished(opened.body.previews[0].deploy);
  expect(deploy.status, JSON.stringify(deploy)).toBe('success');
  await waitFor(async () => (await get(previewPort)).includes(text), { what: `the preview of ${app} to serve its commit` });
  const closed = await close();
  expect(closed.status, JSON.stringify(closed.body)).toBe(202);
  await waitFor(() => refused(previewPort), { timeoutMs: 30_000, what: `the preview of ${app} to be gone` });
}

describe('code hosts beyond GitHub', () => {
  it('GitLab: a push builds a private repository cloned with the token as a header; a merge request previews; a wrong token is 401', async () => {
    const repo = await repoFor('mike/diaspora', 'master');
    const root = repo.url.slice('file://'.length).replace(/\/mike\/diaspora\.git$/, '');
    gitServer = await startGitHttpServer(root, { user: 'oauth2', token: TOKEN });
    const head = await repo.commit({ 'index.html': '<h1>gitlab push</h1>' }, 'master');
    const app = await createApp({ name: 'gl-diaspora', repo_url: `${gitServer.url}/mike/diaspora.git`, branch: 'master', code_host: 'gitlab', repo_token: TOKEN });

    const push = fixture('gitlab/push.json');
    push.after = push.checkout_sha = head;
    expect((await gitlab('Push Hook', push, 'wrong')).status).toBe(401);
    const res = await gitlab('Push Hook', push);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const deploy = await finished(res.body.deploys[0]);
    expect(deploy.status, JSON.stringify(deploy)).toBe('success');
    expect(deploy.commit_sha).toBe(head);
    await waitFor(async () => (await get(app.fallback_port)).includes('gitlab push'), { what: 'the GitLab app to serve the pushed commit' });
    // Every request of the clone carried the token as Basic oauth2:<token>; none had it in the URL.
    const used = gitServer.requests.filter((r) => r.authorized);
    expect(used.length).toBeGreaterThan(0);
    expect(gitServer.requests.every((r) => !r.urlHadCredentials && (r.user === null || r.user === 'oauth2'))).toBe(true);
    const events = JSON.stringify((await t.api('GET', `/api/deploys/${deploy.id}/events`)).body);
    expect(events).not.toContain(TOKEN);
    expect(JSON.stringify((await t.api('GET', `/api/apps/${app.id}`)).body)).not.toContain(TOKEN);

    // Merge request: the published example retargeted at the test repository's feature branch.
    const feature = await repo.commit({ 'index.html': '<h1>gitlab merge request</h1>' }, 'ms-viewport');
    const mr = fixture('gitlab/merge_request.open.json');
    mr.project.path_with_namespace = 'mike/diaspora';
    mr.object_attributes.last_commit.id = feature;
    const close = structuredClone(mr);
    close.object_attributes.action = 'close';
    await previewRoundTrip('gl-diaspora', () => gitlab('Merge Request Hook', mr), () => gitlab('Merge Request Hook', close), 'gitlab merge request');
  }, 150_000);

  it.each(['gitea', 'forgejo'] as const)('%s: a push builds; a pull request previews; a bad signature is 401', async (host) => {
    const repo = await repoFor(`${host}/webhooks`, 'develop');
    const head = await repo.commit({ 'index.html': `<h1>${host} push</h1>` }, 'develop');
    const app = await createApp({ name: `${host}-webhooks`, repo_url: repo.url, branch: 'develop', code_host: host });

    const push = fixture(`${host}/push.json`);
    push.after = head;
    expect((await gitea(host, 'push', push, 'wrong')).status).toBe(401);
    const res = await gitea(host, 'push', push);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const deploy = await finished(res.body.deploys[0]);
    expect(deploy.status, JSON.stringify(deploy)).toBe('success');
    await waitFor(async () => (await get(app.fallback_port)).includes(`${host} push`), { what: `the ${host} app to serve the pushed commit` });

    // Pull request: the recorded Gitea delivery retargeted at the test repository.
    const feature = await repo.commit({ 'index.html': `<h1>${host} pull request</h1>` }, 'test-patch-1');
    const pr = fixture('gitea/pull_request.synchronized.json');
    pr.repository.full_name = `${host}/webhooks`;
    pr.pull_request.base.ref = 'develop';
    pr.pull_request.head.sha = feature;
    pr.action = 'opened';
    const close = { ...structuredClone(pr), action: 'closed' };
    await previewRoundTrip(`${host}-webhooks`, () => gitea(host, 'pull_request', pr), () => gitea(host, 'pull_request', close), `${host} pull request`);
  }, 150_000);
});
