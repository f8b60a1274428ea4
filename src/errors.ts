// Domain errors: what a command (src/desired/), the store or an edge refuses, said without HTTP. The HTTP
// edge (src/http/errors.ts) maps `kind` to a status and renders API.md's `{"error", "code", "details"?}`;
// the UI shows `message` on the page it re-renders. `code` is API.md's machine code.
export type ErrorKind =
  | 'invalid' // the input breaks a field or record rule (400)
  | 'unauthenticated' // no or wrong credentials (401)
  | 'forbidden' // authenticated or not, refused (403: CSRF)
  | 'not_found' // (404)
  | 'conflict' // the state refuses it now: a name or port taken, still running, already done (409)
  | 'too_large' // a body or upload over its limit (413)
  | 'unprocessable' // well-formed but cannot be carried out as things are (422)
  | 'rate_limited' // (429)
  | 'unavailable'; // a part this daemon does not run or cannot reach (503)

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new DomainError('not_found', 'not_found', `${what} not found`);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new DomainError('conflict', 'conflict', message, details);
/** A 400 `invalid_request` (or another code such as `invalid_archive`). */
export const invalid = (message: string, details?: Record<string, unknown>, code = 'invalid_request') =>
  new DomainError('invalid', code, message, details);
/** The name the edges used before commands existed; the same as `invalid`. */
export const badRequest = (message: string, details?: Record<string, unknown>) => invalid(message, details);
export const unauthenticated = (message: string) => new DomainError('unauthenticated', 'unauthenticated', message);
export const forbidden = (code: string, message: string) => new DomainError('forbidden', code, message);
export const tooLarge = (message: string) => new DomainError('too_large', 'too_large', message);
export const unprocessable = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError('unprocessable', code, message, details);
export const unavailable = (code: string, message: string) => new DomainError('unavailable', code, message);

/** One issue list shape for every rule refusal: `details.issues` names API fields. */
/**
 * One field's refusal. `code`, `minimum`, `maximum` and `expected` (zod's, when there are) let the UI say it
 * in words under the field's label ("Port must be between 1 and 65535").
 */
export type Issue = { path: string; message: string; code?: string; minimum?: number; maximum?: number; expected?: string };
export const invalidIssues = (issues: Issue[], extra: Record<string, unknown> = {}) => {
  const first = issues[0];
  return invalid(first.path ? `${first.path}: ${first.message}` : first.message, { issues, ...extra });
};

/**
 * A failure that retrying will not fix: the reconciler records it in status instead of backing off
 * (DESIGN.md "Core contracts"). Here, not in controller/, because adapters the controller drives (runtime/)
 * throw it too, and they must not import the controller.
 */
export class TerminalError extends Error {}
