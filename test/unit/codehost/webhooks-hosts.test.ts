// The GitLab, Gitea and Forgejo webhooks through the real hono app and a `:memory:` database (issue 20), with
// each host's published example payloads sent byte for byte (test/fixtures/<host>): proof (token, hex
// signature), replay, size limit, host scoping, pushes that build, pull/merge requests that preview, and the
// write-only repo_token of an app.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { listDeploys } from '../../../src/store/deploys.js';
import { allPreviews } from '../../../src/store/previews.js';
import { apps } from '../../../src/store/schema/index.js';
import { signBody } from '../../../src/codehost/signature.js';

const SECRET = 'hosts-secret-for-tests';
const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));
const hex = (secret: string, body: Buffer | string) => createHmac('sha256', secret).update(body).digest('hex');
let n = 0;
let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21100-21109' } });
  await t.login();
});

const post = (path: string, body: Buffer | string, headers: Record<string, string>, api: TestApi = t) =>
  api.request('POST', path, undefined, { raw: body as unknown as string, headers, contentType: 'application/json', cookie: 'none' });

/** A GitLab delivery: `X-Gitlab-Event`, `X-Gitlab-Token`, `Idempotency-Key`. */
const gitlab = (event: string, body: Buffer | string, o: { token?: string | null; id?: string; api?: TestApi } = {}) =>
  post('/api/webhooks/gitlab', body, {
    'x-gitlab-event': event,
    'idempotency-key': o.id ?? `gl-${++n}`,
    ...(o.token === null ? {} : { 'x-gitlab-token': o.token ?? SECRET }),
  }, o.api);

/** A Gitea or Forgejo delivery, signed with the bare hex HMAC of the body. */
const gitea = (host: 'gitea' | 'forgejo', event: string, body: Buffer | string, o: { secret?: string; sign?: boolean; id?: string; family?: 'gitea' | 'forgejo'; api?: TestApi } = {}) => {
  const h = o.family ?? host;
  return post(`/api/webhooks/${host}`, body, {
    [`x-${h}-event`]: event,
    [`x-${h}-delivery`]: o.id ?? `gt-${++n}`,
    ...(o.sign === false ? {} : { [`x-${h}-signature`]: hex(o.secret ?? SECRET, body) }),
  }, o.api);
};

async function makeApp(fields: Record<string, unknown>) {
  const res = await t.request('POST', '/api/apps', { fallback_port: 18500 + ++n, ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as number;
}

describe('GitLab', () => {
  const PUSH = fixture('gitlab/push.json');
  const site = { build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/mike/diaspora.git', branch: 'master', code_host: 'gitlab' };

  it('a push (published example) builds the app at its head, once per delivery', async () => {
    const id = await makeApp({ name: 'gl-site', ...site });
    const res = await gitlab('Push Hook', PUSH, { id: 'same' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const [deploy] = listDeploys(t.db, id);
    expect(res.body).toEqual({ deploys: [deploy.id] });
    expect(deploy).toMatchObject({ commitSha: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7', imageRef: 'svc-build/gl-site:da1560886d4f094c3e6c9ef40349f7d38b5d27d7', trigger: 'webhook' });
    expect(await gitlab('Push Hook', PUSH, { id: 'same' })).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(listDeploys(t.db, id)).toHaveLength(1);
  });

  it.each([
    ['no token', null],
    ['a wrong token', 'guess'],
    ['the secret with a suffix', `${SECRET}x`],
  ])('refuses %s with 401 and records nothing', async (_w, token) => {
    const id = await makeApp({ name: 'gl-a', ...site });
    const res = await gitlab('Push Hook', PUSH, { token, id: 'x' });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/X-Gitlab-Token/);
    expect(listDeploys(t.db, id)).toHaveLength(0);
    // not recorded: the genuine delivery with that id still acts
    expect((await gitlab('Push Hook', PUSH, { id: 'x' })).status).toBe(202);
  });

  it('SVC_GITLAB_WEBHOOK_TOKEN replaces the shared secret for GitLab only', async () => {
    const own = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_GITLAB_WEBHOOK_TOKEN: 'gitlab-only' } });
    expect((await gitlab('Push Hook', PUSH, { api: own })).status).toBe(401);
    expect((await gitlab('Push Hook', PUSH, { api: own, token: 'gitlab-only' })).body).toEqual({ ignored: 'no svc_build app for repository mike/diaspora' });
  });

  it('answers 503 without any secret', async () => {
    const bare = createTestApi();
    const res = await gitlab('Push Hook', PUSH, { api: bare });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('not_configured');
  });

  it('a GitLab delivery never builds an app on another host with the same path', async () => {
    const id = await makeApp({ name: 'gh-site', build_mode: 'svc_build', repo_url: 'https://github.com/mike/diaspora', branch: 'master' });
    expect((await gitlab('Push Hook', PUSH)).body).toEqual({ ignored: 'no svc_build app for repository mike/diaspora' });
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });

  it('a merge request (published example) opens a preview at its last commit', async () => {
    await makeApp({ name: 'gl-test', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/gitlabhq/gitlab-test', branch: 'master', previews: { enabled: true } });
    const res = await gitlab('Merge Request Hook', fixture('gitlab/merge_request.open.json'));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.previews).toEqual([{ app: 'gl-test', preview: 'gl-test-pr-1', deploy: expect.any(Number) }]);
    expect(allPreviews(t.db)).toMatchObject([{ prNumber: 1, headSha: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7', headRef: 'ms-viewport', fork: false }]);
    // closed (here: merged) removes it
    const merged = JSON.parse(fixture('gitlab/merge_request.open.json').toString('utf8'));
    merged.object_attributes.action = 'merge';
    const closed = await gitlab('Merge Request Hook', JSON.stringify(merged));
    expect(closed.body.previews).toEqual([{ app: 'gl-test', removed: expect.anything() }]);
    expect(allPreviews(t.db)).toHaveLength(0);
  });

  it('a push deleting the merge request\'s source branch removes its preview', async () => {
    await makeApp({ name: 'gl-del', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/gitlabhq/gitlab-test', branch: 'master', previews: { enabled: true } });
    expect((await gitlab('Merge Request Hook', fixture('gitlab/merge_request.open.json'))).status).toBe(202);
    expect(allPreviews(t.db)).toHaveLength(1);
    const push = (ref: string) => JSON.stringify({ ref, after: '0'.repeat(40), checkout_sha: null, project: { path_with_namespace: 'gitlabhq/gitlab-test' } });
    // Another branch's deletion leaves it.
    expect((await gitlab('Push Hook', push('refs/heads/other'))).body).toEqual({ ignored: 'branch deleted' });
    expect(allPreviews(t.db)).toHaveLength(1);
    const res = await gitlab('Push Hook', push('refs/heads/ms-viewport'));
    expect(res.body.previews).toEqual([{ app: 'gl-del', removed: expect.anything() }]);
    expect(allPreviews(t.db)).toHaveLength(0);
  });

  it('a pipeline (published example) of a merge request is ignored; other events are answered {ignored}', async () => {
    await makeApp({ name: 'gl-ci', image_ref: 'registry.example/gitlab-test:1', repo_url: 'https://gitlab.example.com/gitlab-org/gitlab-test', branch: 'master' });
    expect((await gitlab('Pipeline Hook', fixture('gitlab/pipeline.success.json'))).body).toEqual({ ignored: 'run triggered by merge_request_event' });
    expect((await gitlab('Issue Hook', '{"object_kind":"issue"}')).body).toEqual({ ignored: 'event issue_hook is not used by svc' });
    expect((await gitlab('Tag Push Hook', '{}')).body).toEqual({ ignored: 'tag push' });
  });

  it('a successful push pipeline of the branch deploys the image CI pushed for the commit', async () => {
    const id = await makeApp({ name: 'gl-ci2', image_ref: 'registry.example/gitlab-test:1', repo_url: 'https://gitlab.example.com/gitlab-org/gitlab-test', branch: 'master' });
    const doc = JSON.parse(fixture('gitlab/pipeline.success.json').toString('utf8'));
    doc.object_attributes.source = 'push';
    expect((await gitlab('Pipeline Hook', JSON.stringify(doc))).status).toBe(202);
    expect(listDeploys(t.db, id)[0].imageRef).toBe('registry.example/gitlab-test:bcbb5ec396a2c0f828686f14fac9b80b780504f2');
  });

  it('refuses a malformed payload with 400 and records nothing', async () => {
    const res = await gitlab('Push Hook', '{"ref":"refs/heads/x"}', { id: 'bad' });
    expect(res.status).toBe(400);
    expect((await gitlab('Push Hook', PUSH, { id: 'bad' })).body).not.toEqual({ duplicate: true });
  });

  it('refuses a body over 25 MiB with 413', async () => {
    const res = await gitlab('Push Hook', Buffer.alloc(25 * 1024 * 1024 + 1, 0x20));
    expect(res.status).toBe(413);
  });
});

describe.each(['gitea', 'forgejo'] as const)('%s', (host) => {
  const PUSH = fixture(`${host}/push.json`);
  const site = { build_mode: 'svc_build', repo_url: `https://code.example.com/${host}/webhooks.git`, branch: 'develop', code_host: host };

  it('a push (published example) builds the app at its head, once per delivery', async () => {
    const id = await makeApp({ name: `${host}-site`, ...site });
    const res = await gitea(host, 'push', PUSH, { id: 'f6266f16-1bf3-46a5-9ea4-602e06ead473' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(listDeploys(t.db, id)).toMatchObject([{ commitSha: 'bffeb74224043ba2feb48d137756c8a9331c449a' }]);
    expect((await gitea(host, 'push', PUSH, { id: 'f6266f16-1bf3-46a5-9ea4-602e06ead473' })).body).toEqual({ duplicate: true });
  });

  it.each([
    ['no signature', { sign: false }],
    ['a signature made with another secret', { secret: 'guess' }],
  ])('refuses %s with 401', async (_w, o) => {
    const id = await makeApp({ name: `${host}-a`, ...site });
    const res = await gitea(host, 'push', PUSH, o);
    expect(res.status).toBe(401);
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });

  it('refuses a body changed after signing', async () => {
    const headers = { [`x-${host}-event`]: 'push', [`x-${host}-signature`]: hex(SECRET, PUSH) };
    expect((await post(`/api/webhooks/${host}`, Buffer.concat([PUSH, Buffer.from(' ')]), headers)).status).toBe(401);
  });

  it('a pull request (recorded Gitea delivery) previews its head', async () => {
    await makeApp({ name: `${host}-pr`, build_mode: 'svc_build', repo_url: 'https://code.example.com/Test-CI/multi-line-secrets', code_host: host, previews: { enabled: true } });
    const res = await gitea(host, 'pull_request', fixture('gitea/pull_request.synchronized.json'));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(allPreviews(t.db)).toMatchObject([{ prNumber: 2, headSha: '788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25', fork: false }]);
  });
});

describe('Gitea and Forgejo alike', () => {
  it('Forgejo accepts its "Gitea" webhook type (X-Gitea-* headers only)', async () => {
    const id = await makeApp({ name: 'fj', build_mode: 'svc_build', repo_url: 'https://codeberg.org/forgejo/webhooks', branch: 'develop' });
    const res = await gitea('forgejo', 'push', fixture('forgejo/push.json'), { family: 'gitea' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(listDeploys(t.db, id)).toHaveLength(1);
  });

  it('a GitLab app is not built by a Gitea push', async () => {
    const id = await makeApp({ name: 'gl-only', build_mode: 'svc_build', repo_url: 'https://code.example.com/gitea/webhooks', branch: 'develop', code_host: 'gitlab' });
    expect((await gitea('gitea', 'push', fixture('gitea/push.json'))).body).toEqual({ ignored: 'no svc_build app for repository gitea/webhooks' });
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });

  it('a Gitea workflow_run (GitHub fields) of the branch deploys an external_ci app', async () => {
    const id = await makeApp({ name: 'gt-ci', image_ref: 'registry.example/acme/web:1', repo_url: 'https://code.example.com/acme/web', code_host: 'gitea' });
    const sha = 'e'.repeat(40);
    const body = JSON.stringify({ action: 'completed', repository: { full_name: 'acme/web' }, workflow: { path: '.gitea/workflows/build.yml' }, workflow_run: { conclusion: 'success', head_sha: sha, head_branch: 'main', event: 'push' } });
    expect((await gitea('gitea', 'workflow_run', body)).status).toBe(202);
    expect(listDeploys(t.db, id)[0].imageRef).toBe(`registry.example/acme/web:${sha}`);
  });
});

describe('GitHub webhooks and code_host', () => {
  it('/github concerns only GitHub (or unknown-host) apps; the generic /codehost every app', async () => {
    const id = await makeApp({ name: 'gl-mirror', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/acme/site', code_host: 'gitlab' });
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40), repository: { full_name: 'acme/site' } });
    const headers = (path: string) => ({ 'x-github-event': 'push', 'x-github-delivery': `${path}-1`, 'x-hub-signature-256': signBody(SECRET, body) });
    expect((await post('/api/webhooks/github', body, headers('github'))).body).toEqual({ ignored: 'no svc_build app for repository acme/site' });
    expect((await post('/api/webhooks/codehost', body, headers('codehost'))).status).toBe(202);
    expect(listDeploys(t.db, id)).toHaveLength(1);
  });
});

describe('repo_token', () => {
  const TOKEN = 'glpat-0123456789abcdefghij';
  it('is write-only: shown as set / not set, stored sealed, removed with null', async () => {
    const created = await t.request('POST', '/api/apps', { name: 'priv', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/acme/priv.git', fallback_port: 18600, repo_token: TOKEN, code_host: 'gitlab' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ code_host: 'gitlab', repo_token_set: true });
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);
    const row = t.db.select().from(apps).get()!;
    expect(row.repoTokenSealed).toMatch(/^v1\./);
    expect(row.repoTokenSealed).not.toContain(TOKEN);
    expect(t.sealer.open(row.repoTokenSealed!)).toBe(TOKEN);
    const listed = await t.request('GET', '/api/apps');
    expect(JSON.stringify(listed.body)).not.toContain(TOKEN);
    expect(listed.body[0].repo_token_set).toBe(true);
    // an update without the field keeps it
    expect((await t.request('PUT', `/api/apps/${created.body.id}`, { branch: 'dev' })).body.repo_token_set).toBe(true);
    expect((await t.request('PUT', `/api/apps/${created.body.id}`, { repo_token: null })).body.repo_token_set).toBe(false);
    expect(t.db.select().from(apps).get()!.repoTokenSealed).toBeNull();
    expect(t.logs.join('\n')).not.toContain(TOKEN);
  });

  it.each([['white space', 'a b'], ['a newline', 'abc\ndef'], ['empty', '']])('refuses a token with %s (400)', async (_w, repo_token) => {
    const res = await t.request('POST', '/api/apps', { name: 'bad-tok', fallback_port: 18601, repo_token });
    expect(res.status).toBe(400);
    expect(res.body.issues?.[0]?.path ?? res.body.error).toMatch(/repo_token/);
  });
});
