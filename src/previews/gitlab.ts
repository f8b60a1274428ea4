// GitLab's deliveries that concern previews (issue 20), normalized into src/previews/events.ts: a merge
// request (`iid` is its number).
import type { GitlabMergeRequestPayload } from '../codehost/gitlab.js';
import type { PullRequestEvent } from './events.js';

/** GitLab's merge request actions in GitHub's words; an `update` without new commits stays `update` (ignored). */
function mergeRequestAction(a: GitlabMergeRequestPayload['object_attributes']): string {
  switch (a.action) {
    case 'open': return 'opened';
    case 'reopen': return 'reopened';
    case 'close':
    case 'merge': return 'closed';
    case 'update': return a.oldrev ? 'synchronize' : 'update';
    default: return a.action ?? 'none';
  }
}

const UPDATE = ['opened', 'reopened', 'synchronize'];

export function gitlabMergeRequest(p: GitlabMergeRequestPayload): PullRequestEvent {
  const a = p.object_attributes;
  const action = mergeRequestAction(a);
  // Same project when both ids are given and equal (the source may be named by another path); a missing id
  // counts as a fork, never trusted by default.
  const fork = a.source_project_id == null || a.target_project_id == null || a.source_project_id !== a.target_project_id;
  return {
    host: 'gitlab',
    kind: UPDATE.includes(action) ? 'update' : action === 'closed' ? 'close' : 'other',
    action,
    number: a.iid,
    repository: p.project.path_with_namespace,
    baseRef: a.target_branch,
    head: { sha: a.last_commit.id, ref: a.source_branch, repository: a.source?.path_with_namespace ?? null, fork },
  };
}
