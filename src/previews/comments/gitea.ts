// Gitea and Forgejo pull-request comments (issue 20; the same API): POST /repos/{owner}/{repo}/issues/{index}/comments,
// then PATCH /repos/{owner}/{repo}/issues/comments/{id}; the app's repo_token goes as `Authorization: token`.
import { checkId, sendComment, type HostCall } from './http.js';
import { CommentError, type CommentClient } from './port.js';

function repoPath(fullName: string): string {
  const m = /^([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})$/.exec(fullName);
  if (!m || m[1].startsWith('.') || m[2].startsWith('.')) throw new CommentError(`not a repository name: ${JSON.stringify(fullName.slice(0, 100))}`);
  return `${m[1]}/${m[2]}`;
}

export function giteaComments(o: { origin: string; repository: string; token: string; fetch?: typeof fetch }): CommentClient {
  const h: HostCall = { base: `${o.origin}/api/v1`, headers: { authorization: `token ${o.token}` }, fetch: o.fetch };
  return {
    async post(index, body) {
      return (await sendComment(h, 'POST', `/repos/${repoPath(o.repository)}/issues/${index}/comments`, body))!;
    },
    async edit(_index, id, body) {
      checkId(id);
      return (await sendComment(h, 'PATCH', `/repos/${repoPath(o.repository)}/issues/comments/${id}`, body, true)) !== null;
    },
  };
}
