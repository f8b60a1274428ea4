// GitLab merge-request notes (issue 20): POST /projects/{path}/merge_requests/{iid}/notes, then
// PUT .../notes/{note_id}; the project is its url-encoded path, the app's repo_token goes as PRIVATE-TOKEN.
import { checkId, sendComment, type HostCall } from './http.js';
import { CommentError, type CommentClient } from './port.js';

/** `group/sub/project`, each part checked, encoded as one path segment. */
function projectPath(path: string): string {
  const parts = path.split('/');
  if (parts.length < 2 || parts.length > 20 || !parts.every((p) => /^[A-Za-z0-9_.-]{1,255}$/.test(p) && !p.startsWith('.'))) {
    throw new CommentError(`not a project path: ${JSON.stringify(path.slice(0, 100))}`);
  }
  return encodeURIComponent(path);
}

export function gitlabComments(o: { origin: string; repository: string; token: string; fetch?: typeof fetch }): CommentClient {
  const h: HostCall = { base: `${o.origin}/api/v4`, headers: { 'private-token': o.token }, fetch: o.fetch };
  const notes = (iid: number) => `/projects/${projectPath(o.repository)}/merge_requests/${iid}/notes`;
  return {
    async post(iid, body) {
      return (await sendComment(h, 'POST', notes(iid), body))!;
    },
    async edit(iid, id, body) {
      checkId(id);
      return (await sendComment(h, 'PUT', `${notes(iid)}/${id}`, body, true)) !== null;
    },
  };
}
