// The one JSON call the GitLab and Gitea/Forgejo comment clients make: the token goes only in the header
// they name; a failure says the method, the path and the status (never the header), as GitHub's client does.
import { z } from 'zod';
import { CommentError } from './port.js';

export interface HostCall {
  /** The API root, e.g. `https://gitlab.example/api/v4` (no trailing slash). */
  base: string;
  headers: Record<string, string>;
  fetch?: typeof fetch;
}

const idOf = z.looseObject({ id: z.union([z.number().int(), z.string().regex(/^[0-9]{1,20}$/)]) });

/** Sends `{ body }`; answers the `id` of the comment in the answer, or null on 404 when `missingOk`. */
export async function sendComment(h: HostCall, method: 'POST' | 'PUT' | 'PATCH', path: string, body: string, missingOk = false): Promise<string | null> {
  const res = await (h.fetch ?? fetch)(`${h.base}${path}`, {
    method,
    headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'svc', ...h.headers },
    body: JSON.stringify({ body }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status === 404 && missingOk) return null;
  if (!res.ok) throw new CommentError(`${method} ${path} answered ${res.status}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CommentError(`${method} ${path} answered something that is not JSON`);
  }
  const parsed = idOf.safeParse(doc);
  if (!parsed.success) throw new CommentError(`${method} ${path} answered no comment id`);
  return String(parsed.data.id);
}

export function checkId(id: string) {
  if (!/^[0-9]{1,20}$/.test(id)) throw new CommentError('a comment id must be a number');
}
