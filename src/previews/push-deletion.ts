// A push that deletes a branch, from any host's normalized push (src/codehost/events.ts): the previews of pull
// requests from that branch go (issue 20). GitHub's own mapping is in github.ts (its payload says `deleted`).
import type { CodeHost, PushEvent } from '../codehost/events.js';
import type { BranchDeletedEvent } from './events.js';

export function pushDeletion(host: CodeHost, e: PushEvent): BranchDeletedEvent | null {
  if (!e.deleted || !e.ref.startsWith('refs/heads/')) return null;
  return { host, repository: e.repo, branch: e.ref.slice('refs/heads/'.length) };
}
