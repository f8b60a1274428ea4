// Gitea's and Forgejo's webhook payloads (docs.gitea.com/usage/webhooks, forgejo.org/docs/latest/user/webhooks):
// the same format for both (Forgejo is a fork of Gitea and still sends the X-Gitea-* headers). Push and
// workflow_run follow GitHub's field names; a pull request's update is `synchronized`, and the head's
// repository may be given only as `repo_id`.
import { z } from 'zod';
import type { CiRunEvent, PushEvent } from './events.js';

const repository = z.looseObject({ full_name: z.string().min(1).max(300), id: z.number().int().nullish() });
const commit = z
  .string()
  .regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/i, 'must be a full hex commit id')
  .transform((s) => s.toLowerCase());

export const giteaPushPayload = z.looseObject({ ref: z.string(), after: z.string(), repository });
export type GiteaPushPayload = z.infer<typeof giteaPushPayload>;

// A deleted branch sends forty zeros as `after` (Gitea sends no `deleted` flag).
export const giteaPush = (p: GiteaPushPayload): PushEvent => ({ repo: p.repository.full_name, ref: p.ref, after: p.after, deleted: /^0+$/.test(p.after) });

const side = z.looseObject({
  ref: z.string().min(1).max(255),
  sha: commit,
  repo_id: z.number().int().nullish(),
  repo: z.looseObject({ full_name: z.string().nullish() }).nullish(),
});

export const giteaPullRequestPayload = z.looseObject({
  action: z.string(),
  number: z.number().int().positive(),
  repository,
  pull_request: z.looseObject({ head: side, base: side.pick({ ref: true }).loose() }),
});
export type GiteaPullRequestPayload = z.infer<typeof giteaPullRequestPayload>;

/** Gitea Actions' `workflow_job`: one job of a run. */
export const giteaWorkflowJobPayload = z.looseObject({
  action: z.string(),
  repository,
  workflow_job: z.looseObject({
    head_sha: commit,
    head_branch: z.string().nullish(),
    conclusion: z.string().nullish(),
    name: z.string().nullish(),
  }),
});
export type GiteaWorkflowJobPayload = z.infer<typeof giteaWorkflowJobPayload>;

/**
 * A finished job says nothing about the run's other jobs: it deploys only apps whose `ci_workflow` names
 * the job (the one that pushes the image), never "any workflow".
 */
export function giteaWorkflowJob(p: GiteaWorkflowJobPayload): CiRunEvent {
  const job = p.workflow_job;
  return {
    kind: 'workflow_job',
    repo: p.repository.full_name,
    completed: p.action === 'completed',
    state: `action ${p.action}`,
    conclusion: job.conclusion ?? null,
    branch: job.head_branch ?? null,
    sha: job.head_sha,
    trigger: null,
    fromFork: null,
    names: job.name ? [job.name] : [],
    paths: [],
    namedOnly: true,
  };
}
