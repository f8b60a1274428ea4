// Gitea's and Forgejo's deliveries that concern previews (issue 20), normalized into src/previews/events.ts:
// a pull request (its update is `synchronized`; the head's repository may be given only as `repo_id`).
import type { GiteaPullRequestPayload } from '../codehost/gitea.js';
import type { PullRequestEvent } from './events.js';

const UPDATE = ['opened', 'reopened', 'synchronize'];

export function giteaPullRequest(p: GiteaPullRequestPayload, host: 'gitea' | 'forgejo' = 'gitea'): PullRequestEvent {
  const head = p.pull_request.head;
  const headName = head.repo?.full_name ?? null;
  // The head repository by name when given, else by id; neither: unknown, treated as a fork.
  const same = headName ? headName.toLowerCase() === p.repository.full_name.toLowerCase() : head.repo_id != null && head.repo_id === p.repository.id;
  const action = p.action === 'synchronized' ? 'synchronize' : p.action;
  return {
    host,
    kind: UPDATE.includes(action) ? 'update' : action === 'closed' ? 'close' : 'other',
    action,
    number: p.number,
    repository: p.repository.full_name,
    baseRef: p.pull_request.base.ref,
    head: { sha: head.sha, ref: head.ref, repository: headName, fork: !same },
  };
}
