// The webhook route through the real hono app and a `:memory:` database, with GitHub's published example
// payloads sent byte for byte (test/fixtures/github): signature, replay, form encoding, the decisions.
import { readFileSync } from 'node:fs';
import { describe, expect, it, beforeEach } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { signBody } from '../../../src/codehost/signature.js';
import { listDeploys } from '../../../src/store/deploys.js';
import { listInstallations } from '../../../src/store/codehost.js';

const SECRET = 'wh-secret-for-tests';
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/github/${name}`, import.meta.url));
const RUN = fixture('workflow_run.completed.json'); // octo-org/octo-repo, branch master, workflow test.yml
const SHA = '3484a3fb816e0859fd6e1cea078d76385ff50625';
let n = 0;

let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET } });
  await t.login();
});

/** Sends `body` (exact bytes) as GitHub does; `sign` false sends no signature. */
function deliver(event: string, body: Buffer | string, o: { secret?: string; sign?: boolean; id?: string; type?: string; path?: string; api?: TestApi } = {}) {
  const headers: Record<string, string> = { 'x-github-event': event, 'x-github-delivery': o.id ?? `delivery-${++n}` };
  if (o.sign !== false) headers['x-hub-signature-256'] = signBody(o.secret ?? SECRET, body);
  return (o.api ?? t).request('POST', o.path ?? '/api/webhooks/github', undefined, {
    raw: body as unknown as string,
    headers,
    contentType: o.type ?? 'application/json',
    cookie: 'none',
  });
}

async function makeApp(fields: Record<string, unknown>) {
  const res = await t.request('POST', '/api/apps', { fallback_port: 18000 + ++n, ...fields });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

describe('webhook authentication', () => {
  it('answers 503 and does nothing without a configured secret', async () => {
    const bare = createTestApi();
    const res = await deliver('workflow_run', RUN, { api: bare });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('not_configured');
  });

  it.each([
    ['no signature', { sign: false }],
    ['a signature made with another secret', { secret: 'guess' }],
  ])('refuses %s with 401', async (_w, o) => {
    const id = await makeApp({ name: 'wh-a', image_ref: 'ghcr.io/octo-org/octo-repo:old', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const res = await deliver('workflow_run', RUN, o);
    expect(res.status).toBe(401);
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });

  it('refuses a body changed after signing', async () => {
    const headers = { 'x-github-event': 'ping', 'x-hub-signature-256': signBody(SECRET, '{"zen":"a"}') };
    const res = await t.request('POST', '/api/webhooks/codehost', undefined, { raw: '{"zen":"b"}', headers, cookie: 'none' });
    expect(res.status).toBe(401);
  });
});

describe('workflow_run', () => {
  it('deploys <image without tag>:<head_sha> for the published example, once per delivery id', async () => {
    const id = await makeApp({ name: 'wh-b', image_ref: 'ghcr.io/octo-org/octo-repo:old', repo_url: 'https://github.com/Octo-Org/octo-repo.git', branch: 'master' });
    const res = await deliver('workflow_run', RUN, { id: 'same-id' });
    expect(res.status).toBe(202);
    const [deploy] = listDeploys(t.db, id);
    expect(res.body).toEqual({ deploys: [deploy.id] });
    expect(deploy).toMatchObject({ imageRef: `ghcr.io/octo-org/octo-repo:${SHA}`, commitSha: SHA, trigger: 'webhook', origin: 'webhook', status: 'pending' });
    expect(t.enqueue.keys).toContain('app:wh-b');

    const again = await deliver('workflow_run', RUN, { id: 'same-id' });
    expect(again).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(listDeploys(t.db, id)).toHaveLength(1);
  });

  it('accepts the form-encoded delivery, signed over the raw form body', async () => {
    const id = await makeApp({ name: 'wh-c', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const form = 'payload=' + encodeURIComponent(RUN.toString('utf8'));
    const res = await deliver('workflow_run', form, { type: 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(202);
    expect(listDeploys(t.db, id)[0].imageRef).toBe(`web:${SHA}`);
  });

  it('follows the app\'s ci_workflow: the file path or the name selects, another workflow is ignored', async () => {
    const id = await makeApp({ name: 'wh-d', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master', ci_workflow: '.github/workflows/release.yml' });
    const other = await deliver('workflow_run', RUN);
    expect(other.status).toBe(200);
    expect(other.body.ignored).toMatch(/ci_workflow/);
    expect((await t.request('PUT', `/api/apps/${id}`, { ci_workflow: '.github/workflows/test.yml' })).body.ci_workflow).toBe('.github/workflows/test.yml');
    expect((await deliver('workflow_run', RUN)).status).toBe(202);
    await t.request('PUT', `/api/apps/${id}`, { ci_workflow: 'test' });
    expect((await deliver('workflow_run', RUN)).status).toBe(202);
  });

  const variant = (patch: (p: any) => void) => {
    const doc = JSON.parse(RUN.toString('utf8'));
    patch(doc);
    return JSON.stringify(doc);
  };

  it.each([
    ['another branch', (p: any) => (p.workflow_run.head_branch = 'dev'), /branch dev/],
    ['a failed run', (p: any) => (p.workflow_run.conclusion = 'failure'), /conclusion failure/],
    ['an action other than completed', (p: any) => (p.action = 'requested'), /action requested/],
    ['a run from a fork', (p: any) => (p.workflow_run.head_repository.full_name = 'mallory/octo-repo'), /fork/],
    ['a pull_request run', (p: any) => (p.workflow_run.event = 'pull_request'), /pull_request/],
    ['another repository', (p: any) => (p.repository.full_name = p.workflow_run.head_repository.full_name = 'octo-org/other'), /no external_ci app/],
  ])('ignores %s with 200 {ignored}', async (_w, patch, reason) => {
    const id = await makeApp({ name: 'wh-e', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const res = await deliver('workflow_run', variant(patch));
    expect(res.status).toBe(200);
    expect(res.body.ignored).toMatch(reason);
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });

  it('refuses a head_sha that is not a commit id with 400 and records nothing', async () => {
    await makeApp({ name: 'wh-f', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const bad = variant((p) => (p.workflow_run.head_sha = 'latest; rm -rf /'));
    const res = await deliver('workflow_run', bad, { id: 'bad-1' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    // Not recorded: a corrected redelivery with the same id is still handled.
    expect((await deliver('workflow_run', RUN, { id: 'bad-1' })).status).toBe(202);
  });

  it('ignores unknown fields of any type', async () => {
    await makeApp({ name: 'wh-g', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const odd = variant((p) => {
      p.workflow_run.extra = [1, { a: null }];
      p.repository.owner = 42;
      p.sender = null;
    });
    expect((await deliver('workflow_run', odd)).status).toBe(202);
  });

  it('works without X-GitHub-Delivery: the body identifies the delivery', async () => {
    const id = await makeApp({ name: 'wh-h', image_ref: 'web:1', repo_url: 'https://github.com/octo-org/octo-repo', branch: 'master' });
    const headers = { 'x-codehost-event': 'workflow_run', 'x-hub-signature-256': signBody(SECRET, RUN) };
    const send = () => t.request('POST', '/api/webhooks/codehost', undefined, { raw: RUN as unknown as string, headers, cookie: 'none' });
    expect((await send()).status).toBe(202);
    expect((await send()).body).toEqual({ duplicate: true });
    expect(listDeploys(t.db, id)).toHaveLength(1);
  });
});

describe('push', () => {
  const push = (o: Record<string, unknown>) =>
    JSON.stringify({ ref: 'refs/heads/main', after: 'c'.repeat(40), deleted: false, repository: { full_name: 'acme/site', extra: true }, ...o });

  it('queues a build deploy of `after` for a svc_build app of the branch', async () => {
    const id = await makeApp({ name: 'wh-site', build_mode: 'svc_build', repo_url: 'file:///srv/git/acme/site.git', branch: 'main' });
    const res = await deliver('push', push({}));
    expect(res.status).toBe(202);
    const [d] = listDeploys(t.db, id);
    expect(d).toMatchObject({ imageRef: `svc-build/wh-site:${'c'.repeat(40)}`, commitSha: 'c'.repeat(40), trigger: 'webhook' });
  });

  it('ignores the published tag push, deletions and other branches', async () => {
    const id = await makeApp({ name: 'wh-hello', build_mode: 'svc_build', repo_url: 'https://github.com/codertocat/hello-world', branch: 'main' });
    expect((await deliver('push', fixture('push.tag-deleted.json'))).body).toEqual({ ignored: 'tag push' });
    expect((await deliver('push', push({ repository: { full_name: 'Codertocat/Hello-World' }, deleted: true }))).body.ignored).toMatch(/deleted/);
    expect((await deliver('push', push({ repository: { full_name: 'Codertocat/Hello-World' }, ref: 'refs/heads/dev' }))).body.ignored).toMatch(/branch dev/);
    expect(listDeploys(t.db, id)).toHaveLength(0);
  });
});

describe('other events', () => {
  it('answers ping and ignores events svc does not use', async () => {
    expect((await deliver('ping', '{"zen":"Design for failure."}')).body).toEqual({ pong: true });
    expect((await deliver('issues', '{"action":"opened"}')).body.ignored).toMatch(/issues/);
  });

  it('records installations created and deleted; a deleted one never seen is a no-op', async () => {
    const created = JSON.stringify({ action: 'created', installation: { id: 77, account: { login: 'acme' } } });
    expect((await deliver('installation', created)).status).toBe(200);
    expect(listInstallations(t.db).map((i) => [i.installationId, i.account])).toEqual([[77, 'acme']]);
    const deleted = JSON.stringify({ action: 'deleted', installation: { id: 77 } });
    expect((await deliver('installation', deleted)).status).toBe(200);
    expect(listInstallations(t.db)).toHaveLength(0);
    const unseen = JSON.stringify({ action: 'deleted', installation: { id: 78 } });
    expect((await deliver('installation', unseen)).status).toBe(200);
  });

  it('refuses a body over 25 MiB with 413', async () => {
    const big = Buffer.alloc(25 * 1024 * 1024 + 10, 0x20);
    const res = await deliver('ping', big);
    expect(res.status).toBe(413);
  });

  it('refuses an invalid JSON body with 400', async () => {
    expect((await deliver('push', '{not json')).status).toBe(400);
  });
});
