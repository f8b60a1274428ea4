// Code hosts beyond GitHub (issue 20): each host's published example payload parsed and normalized into the
// host-neutral events, and the pure host rules (derived host, which deliveries concern an app, how a token travels).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gitlabMergeRequestPayload, gitlabPipeline, gitlabPipelinePayload, gitlabPush, gitlabPushPayload } from '../../../src/codehost/gitlab.js';
import { giteaPullRequestPayload, giteaPush, giteaPushPayload, giteaWorkflowJob, giteaWorkflowJobPayload } from '../../../src/codehost/gitea.js';
import { gitlabMergeRequest } from '../../../src/previews/gitlab.js';
import { giteaPullRequest } from '../../../src/previews/gitea.js';
import { decideCiRun, decidePush, type AppFacts } from '../../../src/codehost/decide.js';
import { deliveryConcerns, derivedHost, tokenTransport, tokenUser } from '../../../src/codehost/hosts.js';
import { verifyHexSignature, verifyToken } from '../../../src/codehost/signature.js';
import { createHmac } from 'node:crypto';

const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8'));
const app = (o: Partial<AppFacts> = {}): AppFacts => ({ id: 1, name: 'web', appType: 'managed', buildMode: 'external_ci', repoUrl: 'https://gitlab.example/acme/web.git', branch: 'main', imageRef: 'registry.example/acme/web:1', ciWorkflow: null, ...o });
const SHA = 'c'.repeat(40);

describe('GitLab payloads', () => {
  it('push (published example): the project path, branch and head', () => {
    expect(gitlabPush(gitlabPushPayload.parse(fixture('gitlab/push.json')))).toEqual({
      repo: 'mike/diaspora', ref: 'refs/heads/master', after: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7', deleted: false,
    });
  });

  it('push of a deleted branch: zeros and no checkout_sha', () => {
    const p = gitlabPushPayload.parse({ ref: 'refs/heads/x', after: '0'.repeat(40), checkout_sha: null, project: { path_with_namespace: 'a/b' } });
    expect(gitlabPush(p).deleted).toBe(true);
  });

  it('merge request (published example): iid, source and target branches, last commit; same project is no fork', () => {
    expect(gitlabMergeRequest(gitlabMergeRequestPayload.parse(fixture('gitlab/merge_request.open.json')))).toEqual({
      host: 'gitlab', kind: 'update', action: 'opened', number: 1, repository: 'gitlabhq/gitlab-test', baseRef: 'master',
      head: { sha: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7', ref: 'ms-viewport', repository: 'awesome_space/awesome_project', fork: false },
    });
  });

  it.each([
    ['open', undefined, 'opened'], ['reopen', undefined, 'reopened'], ['close', undefined, 'closed'], ['merge', undefined, 'closed'],
    ['update', 'a'.repeat(40), 'synchronize'], ['update', undefined, 'update'], ['approved', undefined, 'approved'],
  ])('merge request action %s (oldrev %s) is %s', (action, oldrev, want) => {
    const doc = fixture('gitlab/merge_request.open.json');
    doc.object_attributes.action = action;
    if (oldrev) doc.object_attributes.oldrev = oldrev;
    expect(gitlabMergeRequest(gitlabMergeRequestPayload.parse(doc)).action).toBe(want);
  });

  it('a merge request from another project is a fork', () => {
    const doc = fixture('gitlab/merge_request.open.json');
    doc.object_attributes.source_project_id = 99;
    expect(gitlabMergeRequest(gitlabMergeRequestPayload.parse(doc)).head.fork).toBe(true);
  });

  it('pipeline (published example): a merge request pipeline never deploys the branch', () => {
    const run = gitlabPipeline(gitlabPipelinePayload.parse(fixture('gitlab/pipeline.success.json')));
    expect(run).toMatchObject({ kind: 'pipeline', repo: 'gitlab-org/gitlab-test', completed: true, conclusion: 'success', branch: 'master', trigger: 'merge_request_event', names: ['Pipeline for branch: master'] });
    const apps = [app({ repoUrl: 'https://gitlab.example/gitlab-org/gitlab-test', branch: 'master' })];
    expect(decideCiRun(run, apps)).toEqual({ kind: 'ignored', reason: 'run triggered by merge_request_event' });
  });

  it('a successful push pipeline of the branch deploys <image>:<sha>; running, failed and tag pipelines do not', () => {
    const doc = (o: Record<string, unknown>) => gitlabPipeline(gitlabPipelinePayload.parse({ project: { path_with_namespace: 'acme/web' }, object_attributes: { ref: 'main', tag: false, sha: SHA, status: 'success', source: 'push', ...o } }));
    expect(decideCiRun(doc({}), [app()])).toMatchObject({ kind: 'deploy', deploys: [{ imageRef: `registry.example/acme/web:${SHA}`, commitSha: SHA }] });
    expect(decideCiRun(doc({ status: 'running' }), [app()])).toEqual({ kind: 'ignored', reason: 'pipeline status running' });
    expect(decideCiRun(doc({ status: 'failed' }), [app()])).toEqual({ kind: 'ignored', reason: 'pipeline conclusion failed' });
    expect(decideCiRun(doc({ tag: true, ref: 'v1' }), [app()])).toMatchObject({ kind: 'ignored', reason: expect.stringMatching(/branch \(none\)/) });
  });
});

describe('Gitea and Forgejo payloads', () => {
  it.each(['gitea', 'forgejo'])('%s push (published example)', (host) => {
    const e = giteaPush(giteaPushPayload.parse(fixture(`${host}/push.json`)));
    expect(e).toEqual({ repo: `${host}/webhooks`, ref: 'refs/heads/develop', after: 'bffeb74224043ba2feb48d137756c8a9331c449a', deleted: false });
    const apps = [app({ buildMode: 'svc_build', repoUrl: `https://code.example/${host}/webhooks.git`, branch: 'develop' })];
    expect(decidePush(e, apps)).toMatchObject({ kind: 'deploy', deploys: [{ commitSha: 'bffeb74224043ba2feb48d137756c8a9331c449a' }] });
  });

  it('a deleted branch (forty zeros, no deleted flag) is ignored', () => {
    const e = giteaPush(giteaPushPayload.parse({ ref: 'refs/heads/develop', after: '0'.repeat(40), repository: { full_name: 'a/b' } }));
    expect(decidePush(e, [app({ buildMode: 'svc_build', repoUrl: 'https://x/a/b' })])).toEqual({ kind: 'ignored', reason: 'branch deleted' });
  });

  it('pull request (a recorded Gitea delivery): synchronized is synchronize; the head by repo_id is the same repository', () => {
    expect(giteaPullRequest(giteaPullRequestPayload.parse(fixture('gitea/pull_request.synchronized.json')))).toEqual({
      host: 'gitea', kind: 'update', action: 'synchronize', number: 2, repository: 'Test-CI/multi-line-secrets', baseRef: 'main',
      head: { sha: '788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25', ref: 'test-patch-1', repository: null, fork: false },
    });
  });

  it.each([
    ['another repo_id', { repo_id: 7 }, true],
    ['another repository by name', { repo: { full_name: 'mallory/multi-line-secrets' } }, true],
    ['the same repository by name', { repo_id: 7, repo: { full_name: 'test-ci/Multi-Line-Secrets' } }, false],
    ['no repository given', { repo_id: null }, true],
  ])('pull request head with %s: fork %s', (_w, head, fork) => {
    const doc = fixture('gitea/pull_request.synchronized.json');
    Object.assign(doc.pull_request.head, head);
    expect(giteaPullRequest(giteaPullRequestPayload.parse(doc)).head.fork).toBe(fork);
  });

  it('workflow_job deploys only an app whose ci_workflow names the job', () => {
    const job = giteaWorkflowJob(giteaWorkflowJobPayload.parse({ action: 'completed', repository: { full_name: 'acme/web' }, workflow_job: { head_sha: SHA, head_branch: 'main', conclusion: 'success', name: 'push-image' } }));
    expect(decideCiRun(job, [app()])).toEqual({ kind: 'ignored', reason: 'a workflow_job deploys only an app whose ci_workflow names it' });
    expect(decideCiRun(job, [app({ ciWorkflow: 'push-image' })])).toMatchObject({ kind: 'deploy', deploys: [{ commitSha: SHA }] });
    expect(decideCiRun({ ...job, completed: false, state: 'action in_progress' }, [app({ ciWorkflow: 'push-image' })])).toEqual({ kind: 'ignored', reason: 'workflow_job action in_progress' });
  });
});

describe('signatures and tokens', () => {
  const body = Buffer.from('{"a":1}');
  const hex = createHmac('sha256', 's3cret').update(body).digest('hex');
  it('X-Gitea-Signature is the bare hex HMAC of the body', () => {
    expect(verifyHexSignature('s3cret', body, hex)).toBe(true);
    expect(verifyHexSignature('s3cret', body, hex.toUpperCase())).toBe(true);
    expect(verifyHexSignature('other', body, hex)).toBe(false);
    expect(verifyHexSignature('s3cret', Buffer.from('{"a":2}'), hex)).toBe(false);
    expect(verifyHexSignature('s3cret', body, `sha256=${hex}`)).toBe(false);
    expect(verifyHexSignature('s3cret', body, undefined)).toBe(false);
  });
  it('X-Gitlab-Token is the secret itself', () => {
    expect(verifyToken('s3cret', 's3cret')).toBe(true);
    expect(verifyToken('s3cret', 's3cre')).toBe(false);
    expect(verifyToken('s3cret', 's3cret ')).toBe(false);
    expect(verifyToken('s3cret', undefined)).toBe(false);
  });
});

describe('hosts', () => {
  it.each([
    ['https://github.com/a/b', 'github'], ['git@gitlab.com:a/b.git', 'gitlab'], ['https://gitea.com/a/b', 'gitea'],
    ['https://codeberg.org/a/b', 'forgejo'], ['https://git.example.com/a/b', null], ['file:///srv/a/b.git', null], [null, null],
  ])('%s is on %s', (url, host) => expect(derivedHost(url)).toBe(host));

  it('a delivery concerns apps on its host (Gitea and Forgejo alike) or on a host svc cannot tell', () => {
    const on = (codeHost: 'github' | 'gitlab' | 'gitea' | 'forgejo' | null, repoUrl = 'https://git.example.com/a/b') => ({ codeHost, repoUrl });
    expect(deliveryConcerns(on(null), 'gitlab')).toBe(true);
    expect(deliveryConcerns(on('gitlab'), 'gitlab')).toBe(true);
    expect(deliveryConcerns(on('gitlab'), 'github')).toBe(false);
    expect(deliveryConcerns(on(null, 'https://github.com/a/b'), 'gitlab')).toBe(false);
    expect(deliveryConcerns(on('forgejo'), 'gitea')).toBe(true);
    expect(deliveryConcerns(on('gitea'), 'forgejo')).toBe(true);
    // set wins over derived: a GitHub-looking URL declared as a GitLab mirror
    expect(deliveryConcerns(on('gitlab', 'https://github.com/a/b'), 'gitlab')).toBe(true);
  });

  it('a token travels over https or loopback http only; ssh and file carry none', () => {
    expect(tokenTransport('https://gitlab.example/a/b.git')).toBe('send');
    expect(tokenTransport('http://127.0.0.1:8080/a/b.git')).toBe('send');
    expect(tokenTransport('http://localhost/a/b.git')).toBe('send');
    expect(tokenTransport('http://gitlab.example/a/b.git')).toBe('refuse');
    expect(tokenTransport('ssh://git@gitlab.example/a/b.git')).toBe('skip');
    expect(tokenTransport('git@gitlab.example:a/b.git')).toBe('skip');
    expect(tokenTransport('file:///srv/a/b.git')).toBe('skip');
    expect([tokenUser('gitlab'), tokenUser('gitea'), tokenUser(null)]).toEqual(['oauth2', 'x-access-token', 'x-access-token']);
  });
});
