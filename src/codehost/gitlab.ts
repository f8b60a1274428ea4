// GitLab's webhook payloads (docs.gitlab.com/user/project/integrations/webhook_events): the few fields svc
// reads, loose like payloads.ts, and their host-neutral form (events.ts). GitLab names a repository by
// `project.path_with_namespace` (`group/subgroup/name`), a merge request by its `iid`.
import { z } from 'zod';
import type { CiRunEvent, PushEvent } from './events.js';

const project = z.looseObject({ path_with_namespace: z.string().min(1).max(300), id: z.number().int().nullish() });
const commit = z
  .string()
  .regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/i, 'must be a full hex commit id')
  .transform((s) => s.toLowerCase());

/** `X-Gitlab-Event` -> the event name svc records and dispatches on. */
export const GITLAB_EVENTS: Record<string, string> = {
  'Push Hook': 'push',
  'Tag Push Hook': 'tag_push',
  'Merge Request Hook': 'merge_request',
  'Pipeline Hook': 'pipeline',
};

export const gitlabPushPayload = z.looseObject({
  ref: z.string(),
  after: z.string(),
  // null when the branch was deleted
  checkout_sha: z.string().nullish(),
  project,
});
export type GitlabPushPayload = z.infer<typeof gitlabPushPayload>;

export const gitlabPush = (p: GitlabPushPayload): PushEvent => ({
  repo: p.project.path_with_namespace,
  ref: p.ref,
  after: p.after,
  deleted: /^0+$/.test(p.after) || p.checkout_sha === null,
});

export const gitlabMergeRequestPayload = z.looseObject({
  project,
  object_attributes: z.looseObject({
    iid: z.number().int().positive(),
    action: z.string().nullish(),
    source_branch: z.string().min(1).max(255),
    target_branch: z.string().min(1).max(255),
    source_project_id: z.number().int().nullish(),
    target_project_id: z.number().int().nullish(),
    source: z.looseObject({ path_with_namespace: z.string().nullish() }).nullish(),
    last_commit: z.looseObject({ id: commit }),
    // present on an `update` only when new commits were pushed (or a suggestion applied)
    oldrev: z.string().nullish(),
  }),
});
export type GitlabMergeRequestPayload = z.infer<typeof gitlabMergeRequestPayload>;

export const gitlabPipelinePayload = z.looseObject({
  project,
  object_attributes: z.looseObject({
    ref: z.string().nullish(),
    tag: z.boolean().nullish(),
    sha: commit,
    status: z.string(),
    source: z.string().nullish(),
    name: z.string().nullish(),
  }),
});
export type GitlabPipelinePayload = z.infer<typeof gitlabPipelinePayload>;

/** Statuses after which a pipeline does not run on by itself. */
const FINISHED = ['success', 'failed', 'canceled', 'skipped'];

export function gitlabPipeline(p: GitlabPipelinePayload): CiRunEvent {
  const a = p.object_attributes;
  return {
    kind: 'pipeline',
    repo: p.project.path_with_namespace,
    completed: FINISHED.includes(a.status),
    state: `status ${a.status}`,
    conclusion: a.status,
    // A tag pipeline builds no branch.
    branch: a.tag ? null : (a.ref ?? null),
    sha: a.sha,
    trigger: a.source ?? null,
    fromFork: null,
    names: a.name ? [a.name] : [],
    paths: [],
  };
}
