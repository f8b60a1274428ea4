// GitHub's deliveries that concern previews (issue 20), normalized into the host-neutral events of
// src/previews/events.ts: `pull_request`, `delete` of a branch, a `push` that deletes a branch.
import type { BranchDeletedEvent, PreviewImageEvent, PullRequestEvent } from './events.js';
import { workflowSelected } from '../codehost/decide.js';
import { githubPush, githubWorkflowRun } from '../codehost/github.js';
import { pushDeletion } from './push-deletion.js';
import type { DeletePayload, PullRequestPayload, PushPayload, WorkflowRunPayload } from '../codehost/payloads.js';

const UPDATE = ['opened', 'reopened', 'synchronize'];

export function githubPullRequest(p: PullRequestPayload): PullRequestEvent {
  const pr = p.pull_request;
  const head = pr.head.repo?.full_name ?? null;
  return {
    host: 'github',
    kind: UPDATE.includes(p.action) ? 'update' : p.action === 'closed' ? 'close' : 'other',
    action: p.action,
    number: p.number,
    repository: p.repository.full_name,
    baseRef: pr.base.ref,
    head: { sha: pr.head.sha, ref: pr.head.ref, repository: head, fork: !head || head.toLowerCase() !== p.repository.full_name.toLowerCase() },
  };
}

/** `delete` of a branch; null for a tag. */
export function githubDelete(p: DeletePayload): BranchDeletedEvent | null {
  return p.ref_type === 'branch' ? { host: 'github', repository: p.repository.full_name, branch: p.ref.replace(/^refs\/heads\//, '') } : null;
}

/** A push with `deleted: true` to a branch; null for any other push. */
export const githubPushDeletion = (p: PushPayload): BranchDeletedEvent | null => pushDeletion('github', githubPush(p));

/** A `workflow_run` that completed with success for a pull request (`event: pull_request`); null for any other run. */
export function githubPreviewImage(p: WorkflowRunPayload): PreviewImageEvent | null {
  const run = p.workflow_run;
  if (p.action !== 'completed' || run.conclusion !== 'success' || run.event !== 'pull_request' || !run.head_branch) return null;
  return {
    host: 'github',
    repository: p.repository.full_name,
    branch: run.head_branch,
    sha: run.head_sha,
    headRepository: run.head_repository?.full_name ?? null,
    selects: (ciWorkflow) => workflowSelected(ciWorkflow, githubWorkflowRun(p)),
  };
}
