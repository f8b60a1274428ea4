// The webhooks of the code hosts beyond GitHub (API.md "Code hosts beyond GitHub"): how each proves a delivery
// (Gitea/Forgejo: hex HMAC-SHA256 of the body; GitLab: the shared token), names its event and its delivery,
// and which of its payloads svc acts on. Each payload is normalized (src/codehost/events.ts) and decided by
// the same rules as GitHub's; webhooks.ts runs the shared steps (secret, replay, transaction, answer).
import type { Context } from 'hono';
import { badRequest, unauthenticated } from '../errors.js';
import { decideCiRun, decidePush, type Decision } from '../codehost/decide.js';
import type { CodeHost, PushEvent } from '../codehost/events.js';
import { githubWorkflowRun } from '../codehost/github.js';
import { giteaPullRequestPayload, giteaPush, giteaPushPayload, giteaWorkflowJob, giteaWorkflowJobPayload } from '../codehost/gitea.js';
import { GITLAB_EVENTS, gitlabMergeRequestPayload, gitlabPipeline, gitlabPipelinePayload, gitlabPush, gitlabPushPayload } from '../codehost/gitlab.js';
import { workflowRunPayload } from '../codehost/payloads.js';
import { verifyHexSignature, verifyToken } from '../codehost/signature.js';
import { parseInput as parse } from '../desired/parse.js';
import { decidePullRequest, type PreviewDecision } from '../previews/decide.js';
import type { BranchDeletedEvent } from '../previews/events.js';
import { giteaPullRequest } from '../previews/gitea.js';
import { gitlabMergeRequest } from '../previews/gitlab.js';
import { pushDeletion } from '../previews/push-deletion.js';
import type { AppView } from '../store/app-view.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import type { Answer } from './webhooks.js';

/** One code host's webhook: what webhooks.ts needs to run a delivery of it. */
export interface HostSpec {
  host: CodeHost;
  /** The secret (or token) deliveries must prove; undefined: the webhook answers 503. */
  secret(): string | undefined;
  secretName: string;
  /** Throws 401 unless the request proves the secret. */
  verify(c: Context<ApiEnv>, raw: Uint8Array, secret: string): void;
  /** The event name (recorded with the delivery; 400 when missing or malformed). */
  event(c: Context<ApiEnv>): string;
  /** The headers naming the delivery (replay protection), the first present wins; none: the body's hash. */
  deliveryHeaders: string[];
  /** Validates the payload now (400 before anything is recorded); the returned write runs in the transaction. */
  prepare(event: string, doc: unknown): () => Answer;
}

/** The shared steps of webhooks.ts, handed over (not imported) so the two files do not import each other. */
export interface Actions {
  apply(deps: ApiDeps, d: Decision<AppView>): Answer;
  applyPreviews(deps: ApiDeps, d: PreviewDecision<AppView>): Answer;
  branchDeleted(deps: ApiDeps, e: BranchDeletedEvent, apps: AppView[], otherwise: () => Answer): Answer;
  candidates(deps: ApiDeps, host: CodeHost | null): AppView[];
  previewParents(deps: ApiDeps, host: CodeHost | null): AppView[];
}

/** A push: a deleted branch also removes the previews of pull requests from it (issue 20), then deploys as any push. */
function push(deps: HookDeps, a: Actions, host: CodeHost, e: PushEvent): () => Answer {
  const build = () => a.apply(deps, decidePush(e, a.candidates(deps, host)));
  const deleted = pushDeletion(host, e);
  return deleted ? () => a.branchDeleted(deps, deleted, a.previewParents(deps, host), build) : build;
}

type HookDeps = ApiDeps & { codehost: CredentialsHolder };

const ignored = (reason: string) => (): Answer => ({ status: 200, body: { ignored: reason } });

function giteaSpec(deps: HookDeps, a: Actions, host: 'gitea' | 'forgejo'): HostSpec {
  const Name = host === 'gitea' ? 'Gitea' : 'Forgejo';
  // A Forgejo instance sends both header families; its "Gitea" webhook type only X-Gitea-*.
  const header = (c: Context<ApiEnv>, what: string) => c.req.header(`x-${host}-${what}`) ?? (host === 'forgejo' ? c.req.header(`x-gitea-${what}`) : undefined);
  const apps = () => a.candidates(deps, host);
  return {
    host,
    secret: () => deps.config.codehost.hostSecrets[host] ?? deps.codehost.get().webhookSecret,
    secretName: `SVC_${host.toUpperCase()}_WEBHOOK_SECRET (or SVC_CODEHOST_WEBHOOK_SECRET)`,
    verify(c, raw, secret) {
      if (!verifyHexSignature(secret, raw, header(c, 'signature'))) throw unauthenticated(`missing or wrong X-${Name}-Signature`);
    },
    event(c) {
      const event = (header(c, 'event') ?? '').trim();
      if (!/^[a-z_]{1,64}$/.test(event)) throw badRequest(`X-${Name}-Event is missing or malformed`);
      return event;
    },
    deliveryHeaders: host === 'forgejo' ? ['x-forgejo-delivery', 'x-gitea-delivery'] : ['x-gitea-delivery'],
    prepare(event, doc) {
      switch (event) {
        case 'push': {
          return push(deps, a, host, giteaPush(parse(giteaPushPayload, doc)));
        }
        case 'pull_request': {
          const p = parse(giteaPullRequestPayload, doc);
          return () => a.applyPreviews(deps, decidePullRequest(giteaPullRequest(p, host), a.previewParents(deps, host)));
        }
        // Gitea Actions' workflow_run has GitHub's fields.
        case 'workflow_run': {
          const p = parse(workflowRunPayload, doc);
          return () => a.apply(deps, decideCiRun(githubWorkflowRun(p), apps()));
        }
        case 'workflow_job': {
          const p = parse(giteaWorkflowJobPayload, doc);
          return () => a.apply(deps, decideCiRun(giteaWorkflowJob(p), apps()));
        }
        default:
          return ignored(`event ${event} is not used by svc`);
      }
    },
  };
}

function gitlabSpec(deps: HookDeps, a: Actions): HostSpec {
  const apps = () => a.candidates(deps, 'gitlab');
  return {
    host: 'gitlab',
    secret: () => deps.config.codehost.hostSecrets.gitlab ?? deps.codehost.get().webhookSecret,
    secretName: 'SVC_GITLAB_WEBHOOK_TOKEN (or SVC_CODEHOST_WEBHOOK_SECRET)',
    verify(c, _raw, secret) {
      if (!verifyToken(secret, c.req.header('x-gitlab-token'))) throw unauthenticated('missing or wrong X-Gitlab-Token');
    },
    event(c) {
      const name = (c.req.header('x-gitlab-event') ?? '').trim();
      if (!/^[A-Za-z ]{1,64}$/.test(name)) throw badRequest('X-Gitlab-Event is missing or malformed');
      return GITLAB_EVENTS[name] ?? name.toLowerCase().replace(/ /g, '_');
    },
    // Idempotency-Key (GitLab 17.4+) stays the same across GitLab's retries of one delivery; X-Gitlab-Event-UUID before it.
    deliveryHeaders: ['idempotency-key', 'x-gitlab-event-uuid'],
    prepare(event, doc) {
      switch (event) {
        case 'push': {
          return push(deps, a, 'gitlab', gitlabPush(parse(gitlabPushPayload, doc)));
        }
        case 'tag_push':
          return ignored('tag push');
        case 'merge_request': {
          const p = parse(gitlabMergeRequestPayload, doc);
          return () => a.applyPreviews(deps, decidePullRequest(gitlabMergeRequest(p), a.previewParents(deps, 'gitlab')));
        }
        case 'pipeline': {
          const p = parse(gitlabPipelinePayload, doc);
          return () => a.apply(deps, decideCiRun(gitlabPipeline(p), apps()));
        }
        default:
          return ignored(`event ${event} is not used by svc`);
      }
    },
  };
}

export const hostSpecs = (deps: HookDeps, a: Actions): HostSpec[] => [gitlabSpec(deps, a), giteaSpec(deps, a, 'gitea'), giteaSpec(deps, a, 'forgejo')];
