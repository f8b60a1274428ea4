// Previews reported on the pull request (issue 20): the real code-host client against the local code host
// of the test suite (GitHub's comment endpoints, installation tokens checked), pull_request deliveries
// through the real hono app on `:memory:`, deploy status changes written as the pipeline writes them.
// One comment per preview: created once, then edited; a delivery failure is retried, then recorded as an
// app event without the token, and never touches the preview.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { startFakeCodehost, type FakeCodehost } from '../../support/codehost-server.js';
import { signBody } from '../../../src/codehost/signature.js';
import { createCodehostClient } from '../../../src/codehost/client.js';
import { credentialsHolder } from '../../../src/codehost/credentials.js';
import { Bus } from '../../../src/controller/bus.js';
import { accessUrl } from '../../../src/presenters/app-json.js';
import { silentLogger } from '../../../src/log.js';
import { createPreviewReporter, type PreviewReporter } from '../../../src/previews/reporter.js';
import { getAppByName } from '../../../src/store/apps.js';
import { listAppEvents, listDeploys, updateDeploy } from '../../../src/store/deploys.js';
import { allPreviews } from '../../../src/store/previews.js';

const SECRET = 'pr-secret-for-tests';
let n = 0;
let t: TestApi;
let fake: FakeCodehost;
let bus: Bus;
let dir: string;
let reporter: PreviewReporter;
let configured = true;

beforeEach(async () => {
  fake = await startFakeCodehost();
  dir = await mkdtemp(join(tmpdir(), 'svc-pr-report-'));
  await writeFile(join(dir, 'app.pem'), fake.app.pem, { mode: 0o600 });
  bus = new Bus();
  t = createTestApi({
    bus,
    env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009', SVC_CODEHOST_API_URL: fake.url, SVC_CODEHOST_APP_ID: String(fake.app.id), SVC_CODEHOST_APP_PRIVATE_KEY: join(dir, 'app.pem') },
  });
  await t.login();
  configured = true;
  const creds = credentialsHolder(t.config.codehost);
  reporter = createPreviewReporter({
    db: t.db, bus, log: silentLogger, client: createCodehostClient({ apiUrl: fake.url, creds }),
    configured: () => configured, repoToken: (a) => (a.repoTokenSealed ? t.sealer.open(a.repoTokenSealed) : undefined), urlOf: (a) => accessUrl(a, 'svc.example'), retryDelaysMs: [5, 5],
  });
  reporter.start();
});
afterEach(async () => {
  await reporter.stop();
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const sha = (c: string) => c.repeat(40);
function deliver(action: string, number: number, head: string) {
  const body = JSON.stringify({
    action, number, repository: { full_name: 'acme/site' },
    pull_request: { head: { sha: head, ref: `feature-${number}`, repo: { full_name: 'acme/site' } }, base: { ref: 'main' } },
  });
  return t.request('POST', '/api/webhooks/github', undefined, {
    raw: body, contentType: 'application/json', cookie: 'none',
    headers: { 'x-github-event': 'pull_request', 'x-github-delivery': `r-${++n}`, 'x-hub-signature-256': signBody(SECRET, body) },
  });
}
async function parent() {
  const res = await t.request('POST', '/api/apps', { name: 'site', build_mode: 'svc_build', repo_url: 'https://github.com/acme/site', fallback_port: 18080, previews: { enabled: true } });
  expect(res.status).toBe(201);
}
/** The pipeline's writes: the newest deploy of the preview to `status`. */
async function pipeline(status: 'running' | 'success' | 'failed', step?: string, name = 'site-pr-4') {
  const preview = getAppByName(t.db, name)!;
  updateDeploy(t.db, bus, listDeploys(t.db, preview.id)[0].id, { status, ...(step ? { step } : {}) });
  await reporter.idle();
}
const commentCalls = () => fake.calls.filter((c) => c.path.includes('/comments'));

describe('preview reports on the pull request', () => {
  it('posts one comment, then edits it at each change of phase and at removal', async () => {
    await parent();
    expect((await deliver('opened', 4, sha('a'))).status).toBe(202);
    await pipeline('running');
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0]).toMatchObject({ repo: 'acme/site', number: 4 });
    expect(fake.comments[0].body).toContain('Deploying');
    expect(fake.comments[0].body).toContain('http://svc.example:21000');
    expect(fake.comments[0].body).toContain(sha('a').slice(0, 12));

    await pipeline('success');
    // The same phase again (another event row of the deploy) sends nothing.
    bus.emit('deploy', listDeploys(t.db, getAppByName(t.db, 'site-pr-4')!.id)[0].id);
    await reporter.idle();
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].bodies).toHaveLength(2);
    expect(fake.comments[0].body).toContain('Ready');

    await deliver('synchronize', 4, sha('b'));
    await pipeline('running');
    await pipeline('failed', 'build');
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].body).toMatch(/Deploy failed[\s\S]*Failed at: build/);
    expect(fake.comments[0].body).toContain(sha('b').slice(0, 12));

    expect((await deliver('closed', 4, sha('b'))).status).toBe(202);
    await reporter.idle();
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].body).toMatch(/Removed[\s\S]*the pull request was closed/);
    expect(commentCalls().filter((c) => c.method === 'POST')).toHaveLength(1);
    expect(fake.jwtErrors).toEqual([]);
  });

  it('a failed delivery is retried; after the last attempt it is an app event without the token, and the preview is untouched', async () => {
    await parent();
    await deliver('opened', 4, sha('a'));
    fake.failComments = 1;
    await pipeline('running');
    expect(fake.comments).toHaveLength(1); // the retry went through
    fake.failComments = 10;
    await pipeline('success');
    expect(commentCalls().filter((c) => !c.ok)).toHaveLength(4); // 1 + 3 attempts
    const preview = getAppByName(t.db, 'site-pr-4')!;
    const events = listAppEvents(t.db, preview.id).filter((e) => e.step === 'pr_report');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ level: 'warn' });
    expect(events[0].message).toMatch(/pull request #4 failed after 3 attempt\(s\): PATCH \/repos\/acme\/site\/issues\/comments\/\d+ answered 500/);
    expect(events[0].message).not.toMatch(/ghs_|Bearer|token /);
    expect(allPreviews(t.db)).toHaveLength(1);
    expect(fake.comments[0].body).toContain('Deploying');

    // The next change sends the then-current state to the same comment.
    fake.failComments = 0;
    await deliver('synchronize', 4, sha('c'));
    await pipeline('success');
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].body).toContain('Ready');
  });

  it('a comment deleted on the code host is posted again; without a code-host app nothing is sent', async () => {
    await parent();
    await deliver('opened', 4, sha('a'));
    await pipeline('running');
    fake.comments.splice(0);
    await pipeline('success');
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].body).toContain('Ready');

    configured = false;
    await deliver('synchronize', 4, sha('b'));
    await pipeline('running');
    expect(fake.comments[0].bodies).toHaveLength(1);
  });

  it('turning previews off, deleting the preview app and deleting the parent each edit the comment to say why', async () => {
    await parent();
    const id = getAppByName(t.db, 'site')!.id;
    await deliver('opened', 4, sha('a'));
    await pipeline('running');
    expect((await t.request('PUT', `/api/apps/${id}`, { previews: { enabled: false } })).status).toBe(200);
    await reporter.idle();
    expect(fake.comments[0].body).toMatch(/Removed[\s\S]*previews were turned off/);

    await t.request('PUT', `/api/apps/${id}`, { previews: { enabled: true } });
    await deliver('opened', 5, sha('b'));
    updateDeploy(t.db, bus, listDeploys(t.db, getAppByName(t.db, 'site-pr-5')!.id)[0].id, { status: 'running' });
    await reporter.idle();
    expect((await t.request('DELETE', `/api/apps/${getAppByName(t.db, 'site-pr-5')!.id}`)).status).toBe(204);
    await reporter.idle();
    expect(fake.comments[1]).toMatchObject({ number: 5 });
    expect(fake.comments[1].body).toMatch(/Removed[\s\S]*the preview app was deleted/);

    await deliver('opened', 6, sha('c'));
    updateDeploy(t.db, bus, listDeploys(t.db, getAppByName(t.db, 'site-pr-6')!.id)[0].id, { status: 'running' });
    await reporter.idle();
    expect((await t.request('DELETE', `/api/apps/${id}`)).status).toBe(204);
    await reporter.idle();
    expect(fake.comments[2].body).toMatch(/Removed[\s\S]*the app was deleted/);
    expect(fake.comments).toHaveLength(3);
  });

  it('a repository the app is not installed on is an app event, not a crash', async () => {
    fake.installations[0].repositories = ['acme/api'];
    await parent();
    await deliver('opened', 4, sha('a'));
    await pipeline('running');
    expect(fake.comments).toEqual([]);
    const events = listAppEvents(t.db, getAppByName(t.db, 'site-pr-4')!.id).filter((e) => e.step === 'pr_report');
    expect(events[0].message).toMatch(/not installed on acme\/site/);
  });
});

const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
/** A GitLab merge-request delivery (the published example), `action` changed. */
function gitlabMr(action: string) {
  const doc = JSON.parse(fixture('gitlab/merge_request.open.json'));
  doc.object_attributes.action = action;
  return t.request('POST', '/api/webhooks/gitlab', undefined, {
    raw: JSON.stringify(doc), contentType: 'application/json', cookie: 'none',
    headers: { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-token': SECRET, 'idempotency-key': `gl-${++n}` },
  });
}
/** A Gitea pull-request delivery (the recorded example), `action` changed, signed. */
function giteaPr(action: string) {
  const doc = JSON.parse(fixture('gitea/pull_request.synchronized.json'));
  doc.action = action;
  const raw = JSON.stringify(doc);
  return t.request('POST', '/api/webhooks/gitea', undefined, {
    raw, contentType: 'application/json', cookie: 'none',
    headers: { 'x-gitea-event': 'pull_request', 'x-gitea-delivery': `gt-${++n}`, 'x-gitea-signature': createHmac('sha256', SECRET).update(raw).digest('hex') },
  });
}
const eventsOf = (name: string) => listAppEvents(t.db, getAppByName(t.db, name)!.id).filter((e) => e.step === 'pr_report');

describe('preview reports on GitLab merge requests and Gitea/Forgejo pull requests (the app\'s repo_token)', () => {
  it('GitLab: one note posted, then edited; the token only as PRIVATE-TOKEN; a 500 is retried, the last one an event without the token', async () => {
    configured = false; // no GitHub App: GitLab does not need one
    const res = await t.request('POST', '/api/apps', {
      name: 'gl', build_mode: 'svc_build', repo_url: `${fake.url}/gitlabhq/gitlab-test.git`, branch: 'master', code_host: 'gitlab', repo_token: fake.hostToken, fallback_port: 18081, previews: { enabled: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const opened = await gitlabMr('open');
    expect(opened.status, JSON.stringify(opened.body)).toBe(202);
    await pipeline('running', undefined, 'gl-pr-1');
    expect(fake.comments).toMatchObject([{ host: 'gitlab', repo: 'gitlabhq/gitlab-test', number: 1 }]);
    expect(fake.comments[0].body).toContain('Deploying');

    fake.failComments = 1;
    await pipeline('success', undefined, 'gl-pr-1');
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].bodies).toHaveLength(2);
    expect(fake.comments[0].body).toContain('Ready');

    fake.failComments = 10;
    await gitlabMr('update');
    await pipeline('failed', 'build', 'gl-pr-1');
    const events = eventsOf('gl-pr-1');
    expect(events).toHaveLength(1);
    expect(events[0].message).toMatch(/merge_requests\/1\/notes\/\d+ answered 500/);
    expect(events[0].message).not.toContain(fake.hostToken);

    fake.failComments = 0;
    expect((await gitlabMr('merge')).status).toBe(202);
    await reporter.idle();
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0].body).toMatch(/Removed[\s\S]*the pull request was closed/);
    const calls = fake.calls.filter((c) => c.path.includes('/notes'));
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1);
    expect(calls.every((c) => c.path.startsWith('/api/v4/projects/gitlabhq%2Fgitlab-test/merge_requests/1/notes'))).toBe(true);
    expect(calls.filter((c) => !c.ok)).toHaveLength(1 + 3); // the one retried, the three that became the event
  });

  it('Gitea: one comment posted, then edited with `Authorization: token`; without a repo_token nothing is sent', async () => {
    const res = await t.request('POST', '/api/apps', {
      name: 'gt', build_mode: 'svc_build', repo_url: `${fake.url}/Test-CI/multi-line-secrets`, code_host: 'gitea', repo_token: fake.hostToken, fallback_port: 18082, previews: { enabled: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await giteaPr('opened')).status).toBe(202);
    await pipeline('running', undefined, 'gt-pr-2');
    await pipeline('success', undefined, 'gt-pr-2');
    expect(fake.comments).toMatchObject([{ host: 'gitea', repo: 'Test-CI/multi-line-secrets', number: 2 }]);
    expect(fake.comments[0].bodies).toHaveLength(2);
    expect(fake.comments[0].body).toContain('Ready');
    expect(fake.calls.filter((c) => c.path.startsWith('/api/v1/')).map((c) => c.method)).toEqual(['POST', 'PATCH']);
    expect(eventsOf('gt-pr-2')).toEqual([]);

    // The token removed from the parent: not reported (no event either: nobody to report as).
    expect((await t.request('PUT', `/api/apps/${getAppByName(t.db, 'gt')!.id}`, { repo_token: null })).status).toBe(200);
    await giteaPr('synchronized');
    await pipeline('running', undefined, 'gt-pr-2');
    expect(fake.comments[0].bodies).toHaveLength(2);
    expect(eventsOf('gt-pr-2')).toEqual([]);
  });
});
