// Previews of external_ci apps (issue 20): the pull request makes the preview app (no deploy yet); the
// successful `workflow_run` of the pull request's head deploys the image CI pushed for that commit.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { sendGithub } from '../../support/github-delivery.js';
import { getAppByName } from '../../../src/store/apps.js';
import { listDeploys } from '../../../src/store/deploys.js';

const SECRET = 'pr-secret-for-tests';
let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009' } });
  await t.login();
});

const sha = (c: string) => c.repeat(40);
const send = (event: string, doc: unknown) => sendGithub(t, SECRET, event, doc);
const pr = (action: string, head: string) =>
  send('pull_request', { action, number: 2, repository: { full_name: 'acme/api' }, pull_request: { head: { sha: head, ref: 'topic', repo: { full_name: 'acme/api' } }, base: { ref: 'main' } } });
const run = (head: string, o: { event?: string; conclusion?: string; branch?: string; name?: string; headRepo?: string } = {}) =>
  send('workflow_run', {
    action: 'completed', repository: { full_name: 'acme/api' }, workflow: { path: '.github/workflows/ci.yml', name: o.name ?? 'CI' },
    workflow_run: { conclusion: o.conclusion ?? 'success', head_sha: head, head_branch: o.branch ?? 'topic', event: o.event ?? 'pull_request', name: o.name ?? 'CI', path: '.github/workflows/ci.yml', head_repository: { full_name: o.headRepo ?? 'acme/api' } },
  });

describe('external_ci previews', () => {
  it('the pull request makes the preview; its successful run deploys <image>:<sha>; other runs do not', async () => {
    const app = await t.request('POST', '/api/apps', { name: 'api', build_mode: 'external_ci', image_ref: 'ghcr.io/acme/api:latest', repo_url: 'https://github.com/acme/api', fallback_port: 18080, ci_workflow: 'CI', previews: { enabled: true } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const open = await pr('opened', sha('a'));
    expect(open).toMatchObject({ status: 202, body: { previews: [{ app: 'api', preview: 'api-pr-2', waiting: expect.any(String) }] } });
    const preview = getAppByName(t.db, 'api-pr-2')!;
    expect(preview).toMatchObject({ buildMode: 'external_ci', imageRef: 'ghcr.io/acme/api:latest', ciWorkflow: 'CI' });
    expect(listDeploys(t.db, preview.id)).toEqual([]);

    expect((await run(sha('a'), { conclusion: 'failure' })).body.ignored).toMatch(/conclusion failure/);
    expect((await run(sha('b'))).body.ignored).toMatch(/no preview at topic@bbbbbbbbbbbb/);
    expect((await run(sha('a'), { name: 'Lint' })).body.ignored).toMatch(/no preview/);
    expect((await run(sha('a'), { headRepo: 'mallory/api' })).body.ignored).toMatch(/no preview/);
    const ok = await run(sha('a'));
    expect(ok).toMatchObject({ status: 202, body: { previews: [{ app: 'api', pr: 2 }] } });
    expect(listDeploys(t.db, preview.id).map((d) => [d.imageRef, d.commitSha])).toEqual([[`ghcr.io/acme/api:${sha('a')}`, sha('a')]]);

    // A new commit: the preview waits for its run; the old commit's run is ignored.
    await pr('synchronize', sha('c'));
    expect((await run(sha('a'))).body.ignored).toMatch(/no preview at topic@aaaa/);
    expect((await run(sha('c'))).status).toBe(202);
    expect(listDeploys(t.db, preview.id)[0].imageRef).toBe(`ghcr.io/acme/api:${sha('c')}`);
    // A push-triggered run of main still deploys the parent, not the preview.
    const main = await run(sha('d'), { event: 'push', branch: 'main' });
    expect(main.status).toBe(202);
    expect(listDeploys(t.db, app.body.id)[0].imageRef).toBe(`ghcr.io/acme/api:${sha('d')}`);
  });
});
