// The one error type handlers throw. The API's error handler turns it into
// `{"error": "<sentence>", "code": "<machine_code>", "details"?}` with its status (API.md "Conventions").
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 503,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError(409, 'conflict', message, details);
export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, 'invalid_request', message, details);
