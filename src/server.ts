// Composition root of the HTTP side (beside main.ts): joins the REST API (src/api/) and the web UI
// (src/ui/) into the one hono app the daemon serves. Only this file and main.ts import api/; the UI and
// the API never import each other, both are adapters over the same commands (src/desired/).
import { Hono } from 'hono';
import { createAuthFlows } from './http/auth-flows.js';
import { createApi } from './api/app.js';
import { credentialsHolder } from './codehost/credentials.js';
import type { EdgeDeps } from './http/deps.js';
import { errorHandler, notFoundHandler } from './http/errors.js';
import { authorize } from './http/authorize.js';
import { createUi, errorPage, uiNotFound } from './ui/ui.js';

export function createServer(input: EdgeDeps): Hono {
  const deps = { ...input, codehost: input.codehost ?? credentialsHolder(input.config.codehost) };
  const flows = createAuthFlows(deps);
  const root = new Hono();
  const apiError = errorHandler(deps.log);
  const isApi = (path: string) => path === '/api' || path.startsWith('/api/') || path === '/healthz';
  root.onError((err, c) => (isApi(c.req.path) ? apiError(err, c) : errorPage(c as never, err, deps.log)));
  root.notFound((c) => (c.req.path.startsWith('/api/') ? notFoundHandler(c) : uiNotFound(c)));
  // Every request, REST or UI, passes the one permission middleware first (src/auth/permissions.ts).
  root.use('*', authorize(deps));
  root.route('/', createApi(deps, flows));
  // The web UI: pages and their form posts, outside /api (its own session redirect and CSRF token).
  root.route('/', createUi(deps, flows));
  return root;
}
