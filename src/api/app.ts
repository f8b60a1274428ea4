// Joins the per-resource sub-apps into the one hono app the daemon serves. Order matters: limits and
// error handling first, public routes, then the auth wall, then everything that needs a user; the web UI last.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import { errorHandler, notFoundHandler } from './errors.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { serviceRoutes } from './services.js';
import { linkRoutes } from './links.js';
import { authGuard } from './auth-guard.js';
import { authRoutes } from './auth.js';
import { tokenRoutes } from './tokens.js';
import { appRoutes } from './apps.js';
import { envRoutes } from './env.js';
import { deployRoutes } from './deploys.js';
import { logRoutes } from './logs.js';
import { webhookRoutes } from './webhooks.js';
import { codehostRoutes } from './codehost.js';
import { credentialsHolder } from '../codehost/credentials.js';
import { manifestRoutes } from './manifests.js';
import { backupRoutes } from './backups.js';
import { createAuthFlows } from './auth-flows.js';
import { createUi, uiNotFound } from '../ui/ui.js';

const MiB = 1024 * 1024;
const tooLarge = () => {
  throw new ApiError(413, 'too_large', 'request body is too large');
};

export function createApi(input: ApiDeps): Hono<ApiEnv> {
  const deps = { ...input, codehost: input.codehost ?? credentialsHolder(input.config.codehost) };
  const app = new Hono<ApiEnv>();
  app.onError(errorHandler(deps.log));
  app.notFound((c) => (c.req.path.startsWith('/api/') ? notFoundHandler(c) : uiNotFound(c)));
  const flows = createAuthFlows(deps);

  app.use('/api/webhooks/*', bodyLimit({ maxSize: 25 * MiB, onError: tooLarge }));
  app.use('/api/*', async (c, next) => {
    if (c.req.path.startsWith('/api/webhooks/') || c.req.path === '/api/backups/import') return next();
    return bodyLimit({ maxSize: MiB, onError: tooLarge })(c, next);
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  // The wall: every /api/* route below needs a session or token, except the public ones it lists.
  app.use('/api/*', authGuard(deps));
  app.route('/api', webhookRoutes(deps));
  app.route('/api', authRoutes(deps, flows));
  app.route('/api', tokenRoutes(deps));
  app.route('/api', appRoutes(deps));
  app.route('/api', envRoutes(deps));
  app.route('/api', deployRoutes(deps));
  app.route('/api', logRoutes(deps));
  app.route('/api', serviceRoutes(deps));
  app.route('/api', linkRoutes(deps));
  app.route('/api', codehostRoutes(deps));
  app.route('/api', manifestRoutes(deps));
  app.route('/api', backupRoutes(deps));
  // The web UI: pages and their form posts, outside /api (its own session redirect and CSRF token).
  app.route('/', createUi(deps, flows, (req) => app.fetch(req)));
  return app;
}
