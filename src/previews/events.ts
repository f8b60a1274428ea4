// The host-neutral inputs of previews (issue 20): each code host's webhook route (GitHub's today; GitLab,
// Gitea and Forgejo map their merge/pull-request and branch events onto the same shapes) normalizes its
// delivery into one of these, and src/previews/decide.ts decides on them without knowing the host.

import type { CodeHost } from '../codehost/events.js';

/** Code hosts a preview can come from; reporting back (src/previews/report.ts) depends on it. */
export type { CodeHost };

export interface PullRequestEvent {
  host: CodeHost;
  /** `update`: opened, reopened or new commits; `close`: closed or merged; `other`: anything else (ignored). */
  kind: 'update' | 'close' | 'other';
  /** The host's own word for what happened (named in an `ignored` answer). */
  action: string;
  number: number;
  /** `owner/name` of the base repository (the one svc deploys). */
  repository: string;
  baseRef: string;
  head: {
    sha: string;
    ref: string;
    /** `owner/name` of the head's repository; null when the host no longer knows it (a deleted fork). */
    repository: string | null;
    /**
     * The head is in another repository, as the host tells (GitLab compares project ids: a same-project merge
     * request may name its source by another path); unknown counts as a fork, never trusted by default.
     */
    fork: boolean;
  };
}

/** A branch of `repository` was deleted (GitHub `delete`, or a push with `deleted: true`; the others alike). */
export interface BranchDeletedEvent {
  host: CodeHost;
  repository: string;
  branch: string;
}

/**
 * A CI run that finished successfully for a pull request's head (GitHub `workflow_run` of event
 * `pull_request`; a GitLab merge-request pipeline alike): the image it pushed for `sha` is there to preview
 * an `external_ci` app.
 */
export interface PreviewImageEvent {
  host: CodeHost;
  repository: string;
  /** The pull request's head branch and commit. */
  branch: string;
  sha: string;
  /** `owner/name` of the head's repository; null when unknown. */
  headRepository: string | null;
  /** True when the run is the workflow an app names in `ci_workflow` (null: any workflow). */
  selects(ciWorkflow: string | null): boolean;
}
