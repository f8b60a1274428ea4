// The comment client port of the pull-request reporter (issue 20): what the reporter needs from a code
// host, bound to one repository and one credential. One implementation per host (github.ts, gitlab.ts,
// gitea.ts for Gitea and Forgejo); choose.ts picks it from the preview row's host.

export interface CommentClient {
  /** A new comment on pull (merge) request `number`; answers its id. */
  post(number: number, body: string): Promise<string>;
  /** Replaces the text of comment `id` on pull (merge) request `number`; false when it is gone, so a new one is due. */
  edit(number: number, id: string, body: string): Promise<boolean>;
}

/** A failed call: the method, the path and the status, never a token (the message becomes an app event). */
export class CommentError extends Error {}
