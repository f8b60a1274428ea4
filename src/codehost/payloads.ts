// The few payload fields svc reads, per event. Everything else in a delivery is ignored whatever its type
// (GitHub adds fields all the time): objects are loose, and only what a decision uses is validated.
import { z } from 'zod';

const repository = z.looseObject({ full_name: z.string().min(1).max(300) });
const commit = z
  .string()
  .regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/i, 'must be a full hex commit id')
  .transform((s) => s.toLowerCase());

export const workflowRunPayload = z.looseObject({
  action: z.string(),
  repository,
  workflow: z.looseObject({ path: z.string().nullish(), name: z.string().nullish() }).nullish(),
  workflow_run: z.looseObject({
    conclusion: z.string().nullish(),
    head_sha: commit,
    head_branch: z.string().nullish(),
    event: z.string().nullish(),
    name: z.string().nullish(),
    path: z.string().nullish(),
    head_repository: z.looseObject({ full_name: z.string().nullish() }).nullish(),
  }),
});
export type WorkflowRunPayload = z.infer<typeof workflowRunPayload>;

export const pushPayload = z.looseObject({
  ref: z.string(),
  // A deleted branch or tag sends forty zeros; validated only when the push is used.
  after: z.string(),
  deleted: z.boolean().nullish(),
  repository,
});
export type PushPayload = z.infer<typeof pushPayload>;

export const installationPayload = z.looseObject({
  action: z.string(),
  installation: z.looseObject({
    id: z.number().int().positive(),
    account: z.looseObject({ login: z.string().nullish() }).nullish(),
  }),
});
export type InstallationPayload = z.infer<typeof installationPayload>;

/** A full commit id, as a push's `after` must be to be built. */
export const isCommitSha = (s: string) => /^([0-9a-f]{40}|[0-9a-f]{64})$/i.test(s) && !/^0+$/.test(s);

/** `pull_request` (issue 20): the PR's number, head (commit, branch, repository) and base branch. */
export const pullRequestPayload = z.looseObject({
  action: z.string(),
  number: z.number().int().positive(),
  repository,
  pull_request: z.looseObject({
    merged: z.boolean().nullish(),
    head: z.looseObject({
      sha: commit,
      ref: z.string().min(1).max(255),
      // null when the fork the pull request came from was deleted
      repo: z.looseObject({ full_name: z.string().nullish() }).nullish(),
    }),
    base: z.looseObject({ ref: z.string().min(1).max(255) }),
  }),
});
export type PullRequestPayload = z.infer<typeof pullRequestPayload>;

/** `delete` (issue 20): a branch or tag was deleted; a branch's previews go with it. */
export const deletePayload = z.looseObject({
  ref: z.string().min(1).max(255),
  ref_type: z.string(),
  repository,
});
export type DeletePayload = z.infer<typeof deletePayload>;
