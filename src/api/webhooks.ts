// Inbound code-host deliveries (API.md "Code host", "Code hosts beyond GitHub"): `POST /api/webhooks/codehost`
// and its alias `/api/webhooks/github`; `/gitlab`, `/gitea` and `/forgejo` (webhook-hosts.ts). The request
// only verifies, records and enqueues: it answers in milliseconds whatever the deploy does. Order: secret
// configured (503), signature or token (401), payload (400), replay (200 duplicate), then the decision of
// src/codehost/decide.ts written through the deploys command (src/desired/deploys.ts).
import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { badRequest, unauthenticated, unavailable } from '../errors.js';
import { decideCiRun, decidePush, type Decision } from '../codehost/decide.js';
import { githubPush, githubWorkflowRun } from '../codehost/github.js';
import type { CodeHost } from '../codehost/events.js';
import { deliveryConcerns } from '../codehost/hosts.js';
import { hostSpecs, type HostSpec } from './webhook-hosts.js';
import { deletePayload, installationPayload, pullRequestPayload, pushPayload, workflowRunPayload } from '../codehost/payloads.js';
import { githubDelete, githubPreviewImage, githubPullRequest, githubPushDeletion } from '../previews/github.js';
import { decideBranchDeleted, decidePreviewImage, decidePullRequest, type PreviewDecision } from '../previews/decide.js';
import type { BranchDeletedEvent } from '../previews/events.js';
import { deployPreviewImage, teardownPreview, upsertPreview } from '../desired/previews.js';
import { DomainError } from '../errors.js';
import { verifySignature } from '../codehost/signature.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import { tx } from '../store/db.js';
import { deleteInstallation, recordDelivery, recordInstallation, setDeliveryResult } from '../store/codehost.js';
import { nowIso } from '../store/schema/index.js';
import { listAppViews } from '../store/apps.js';
import { allPreviews } from '../store/previews.js';
import { shownImageRef, type AppView } from '../store/app-view.js';
import { requestDeploy } from '../desired/deploys.js';
import { noteAuditNames } from '../http/audit-names.js';
import { parseInput as parse } from '../desired/parse.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { z } from 'zod';
import { operations } from './openapi/operation.js';

const op = operations('Webhooks');
/** A signed delivery: verified, recorded and answered at once; what it deployed is in the answer. */
const delivery = (summary: string) =>
  op({
    summary,
    description: 'Authenticated by its own proof (HMAC signature or token), checked before anything is read. The body is the host\'s event payload (JSON or form-encoded).',
    bodyMedia: { type: 'application/json', description: "the code host's event payload" },
    more: { 202: { description: 'Accepted: a deploy or preview was started' } },
    response: z.looseObject({}).describe('What the delivery did: duplicate, ignored, deployed apps (docs/api.md "Code host")'),
    errors: { 400: 'invalid_request: a missing event header or a malformed payload', 401: 'unauthenticated: a wrong signature or token', 503: 'not_configured: the webhook secret is not set' },
  });

/** A delivery's answer; `apps`: the names of the apps it deployed or changed, for the audit line (not sent). */
export type Answer = { status: 200 | 202; body: Record<string, unknown>; apps?: string[] };

/** The JSON document of a delivery: the body itself, or the form field `payload` of a form-encoded one. */
export function payloadText(contentType: string | undefined, raw: Uint8Array): string {
  const text = Buffer.from(raw).toString('utf8');
  if (contentType?.split(';')[0].trim().toLowerCase() === 'application/x-www-form-urlencoded') {
    const payload = new URLSearchParams(text).get('payload');
    if (payload === null) throw badRequest('form-encoded delivery without a payload field');
    return payload;
  }
  return text;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('delivery body is not valid JSON');
  }
}

export function webhookRoutes(deps: ApiDeps & { codehost: CredentialsHolder }) {
  const r = new Hono<ApiEnv>();

  // `/codehost` is the generic GitHub-compatible webhook (Gitea and Forgejo also sign with X-Hub-Signature-256):
  // it concerns apps on any host, as before there were per-host webhooks; `/github` only GitHub's.
  const github = (scope: CodeHost | null): HostSpec => ({
    host: 'github',
    secret: () => deps.codehost.get().webhookSecret,
    secretName: 'SVC_CODEHOST_WEBHOOK_SECRET',
    verify(c, raw, secret) {
      if (!verifySignature(secret, raw, c.req.header('x-hub-signature-256'))) throw unauthenticated('missing or wrong X-Hub-Signature-256');
    },
    event(c) {
      const event = (c.req.header('x-codehost-event') ?? c.req.header('x-github-event') ?? '').trim();
      if (!/^[a-z_]{1,64}$/.test(event)) throw badRequest('X-GitHub-Event (or X-CodeHost-Event) is missing or malformed');
      return event;
    },
    deliveryHeaders: ['x-github-delivery'],
    prepare: (event, doc) => prepare(deps, event, doc, scope),
  });
  const handler = (spec: HostSpec) => async (c: Context<ApiEnv>) => {
    const secret = spec.secret();
    if (!secret) throw unavailable('not_configured', `${spec.host} webhooks are disabled: ${spec.secretName} is not set`);
    const raw = new Uint8Array(await c.req.arrayBuffer());
    spec.verify(c, raw, secret);
    const event = spec.event(c);
    const named = spec.deliveryHeaders.find((h) => c.req.header(h) !== undefined);
    const header = named === undefined ? undefined : c.req.header(named)!.trim();
    if (header !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(header)) throw badRequest(`${named} is malformed`);
    // Without a delivery id (a hand-written CI step) the body itself identifies the delivery. Another host's
    // ids live in their own namespace: a GitLab UUID never replays a Gitea delivery.
    const id = header || `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const deliveryId = spec.host === 'github' ? id : `${spec.host}:${id}`;
    const doc = parseJson(payloadText(c.req.header('content-type'), raw));

    const act = spec.prepare(event, doc);
    const answer = tx(deps.db, (): Answer => {
      if (!recordDelivery(deps.db, deliveryId, event)) return { status: 200, body: { duplicate: true } };
      const a = act();
      setDeliveryResult(deps.db, deliveryId, JSON.stringify(a.body));
      return a;
    });
    deps.log.info('webhook delivery', { host: spec.host, event, delivery: deliveryId, status: answer.status, result: answer.body });
    noteAuditNames(c, ...(answer.apps ?? []));
    return c.json(answer.body, answer.status);
  };

  r.post('/webhooks/codehost', delivery('A code-host delivery (GitHub format, X-Hub-Signature-256)'), handler(github(null)));
  r.post('/webhooks/github', delivery('A GitHub delivery (X-Hub-Signature-256)'), handler(github('github')));
  for (const spec of hostSpecs(deps, { apply, applyPreviews, branchDeleted, candidates, previewParents })) {
    r.post(`/webhooks/${spec.host}`, delivery(`A ${spec.host} delivery (its own signature or token)`), handler(spec));
  }
  return r;
}

/**
 * The apps a delivery of `host` (null: any host) may concern: not previews (never parents, nor built by
 * pushes to their branch: their pull request's synchronize does it), and on that code host or one svc cannot
 * tell. Each with its shown image (the live one, unless the spec changed since): a CI run's image derives from it.
 */
export function candidates(deps: ApiDeps, host: CodeHost | null): AppView[] {
  return previewParents(deps, host).map((a) => ({ ...a, imageRef: shownImageRef(a) }));
}

/** The same apps as they are stored: a preview copies its parent's spec, not the shown image. */
export function previewParents(deps: ApiDeps, host: CodeHost | null): AppView[] {
  const previewIds = new Set(allPreviews(deps.db).map((p) => p.appId));
  return listAppViews(deps.db).filter((a) => !previewIds.has(a.id) && (host === null || deliveryConcerns(a, host)));
}

/** Validates the payload now (400 before anything is recorded) and returns the write to run in the transaction. */
function prepare(deps: ApiDeps, event: string, doc: unknown, scope: CodeHost | null): () => Answer {
  const apps = () => candidates(deps, scope);
  const parents = () => previewParents(deps, scope);
  switch (event) {
    case 'ping':
      return () => ({ status: 200, body: { pong: true } });
    case 'workflow_run': {
      const p = parse(workflowRunPayload, doc);
      // A pull request's run: the image of an external_ci app's preview (issue 20).
      const image = githubPreviewImage(p);
      if (image) return () => previewImage(deps, decidePreviewImage(image, apps(), allPreviews(deps.db)));
      return () => apply(deps, decideCiRun(githubWorkflowRun(p), apps()));
    }
    case 'push': {
      const p = parse(pushPayload, doc);
      // A push that deletes a branch removes the previews of pull requests from it (issue 20).
      const deleted = githubPushDeletion(p);
      if (deleted) return () => branchDeleted(deps, deleted, parents(), () => apply(deps, decidePush(githubPush(p), apps())));
      return () => apply(deps, decidePush(githubPush(p), apps()));
    }
    case 'delete': {
      const p = parse(deletePayload, doc);
      const deleted = githubDelete(p);
      if (!deleted) return () => ({ status: 200, body: { ignored: `${p.ref_type} deleted` } });
      return () => branchDeleted(deps, deleted, parents(), () => ({ status: 200, body: { ignored: `no preview of branch ${deleted.branch}` } }));
    }
    case 'pull_request': {
      const p = parse(pullRequestPayload, doc);
      return () => applyPreviews(deps, decidePullRequest(githubPullRequest(p), parents()));
    }
    case 'installation': {
      const p = parse(installationPayload, doc);
      return () => {
        const id = p.installation.id;
        if (p.action === 'created') recordInstallation(deps.db, id, p.installation.account?.login ?? null);
        else if (p.action === 'deleted') deleteInstallation(deps.db, id, nowIso());
        else return { status: 200, body: { ignored: `installation action ${p.action}` } };
        return { status: 200, body: { installation: id, action: p.action } };
      };
    }
    default:
      return () => ({ status: 200, body: { ignored: `event ${event} is not used by svc` } });
  }
}

export function apply(deps: ApiDeps, d: Decision<AppView>): Answer {
  if (d.kind === 'ignored') return { status: 200, body: { ignored: d.reason } };
  const ids = d.deploys.map((p) => requestDeploy(deps, p.app, { imageRef: p.imageRef, commitSha: p.commitSha, trigger: 'webhook' }, 'webhook').id);
  return { status: 202, body: { deploys: ids }, apps: d.deploys.map((p) => p.app.name) };
}

/** An external_ci preview's image deployed: 202 `{previews: [{app, preview, deploy}]}`. */
function previewImage(deps: ApiDeps, d: ReturnType<typeof decidePreviewImage<AppView>>): Answer {
  if (d.kind === 'ignored') return { status: 200, body: { ignored: d.reason } };
  const results = d.deploys.map((x) => ({ app: x.parent.name, pr: x.pr, deploy: deployPreviewImage(deps, x.previewAppId, x.imageRef, x.sha, 'webhook').id }));
  return { status: 202, body: { previews: results }, apps: d.deploys.map((x) => x.parent.name) };
}

/** The previews of a deleted branch removed; `otherwise` answers when there were none. */
export function branchDeleted(deps: ApiDeps, e: BranchDeletedEvent, apps: AppView[], otherwise: () => Answer): Answer {
  const d = decideBranchDeleted(e, apps, allPreviews(deps.db));
  return d.kind === 'ignored' ? otherwise() : applyPreviews(deps, d, `its branch ${e.branch} was deleted`);
}

/**
 * Runs each preview action on its own: one app's refusal (no free port, a name clash) is reported in the
 * answer and does not undo another app's preview or the delivery record.
 */
export function applyPreviews(deps: ApiDeps, d: PreviewDecision<AppView>, reason?: string): Answer {
  if (d.kind === 'ignored') return { status: 200, body: { ignored: d.reason } };
  const results = d.actions.map((a) => {
    try {
      if (a.kind === 'teardown') {
        const removed = teardownPreview(deps, a.parent.id, a.pr, 'webhook', reason);
        return removed ? { app: a.parent.name, removed } : { app: a.parent.name, ignored: `no preview of pull request ${a.pr}` };
      }
      const r = tx(deps.db, () => upsertPreview(deps, a.parent, a.pr, 'webhook'));
      return { app: a.parent.name, preview: r.app, ...(r.deploy ? { deploy: r.deploy.id } : { waiting: 'the CI run of the head commit' }), ...(r.evicted.length ? { evicted: r.evicted } : {}) };
    } catch (err) {
      if (err instanceof DomainError) return { app: a.parent.name, error: err.message };
      throw err;
    }
  });
  const did = (r: (typeof results)[number]) => 'deploy' in r || 'removed' in r || 'waiting' in r;
  return { status: results.some(did) ? 202 : 200, body: { previews: results }, apps: results.filter(did).map((r) => r.app) };
}
