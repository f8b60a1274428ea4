// Joins the per-resource REST sub-apps into the API (the composition root, src/server.ts, mounts it beside
// the UI). Order matters: limits and error handling first, then the routes.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { tooLarge as tooLargeError } from '../errors.js';
import { errorHandler, notFoundHandler } from '../http/errors.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import type { AuthFlows } from '../http/auth-flows.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { serviceRoutes } from './services.js';
import { serviceBackupRoutes } from './service-backups.js';
import { linkRoutes } from './links.js';
import { teamRoutes } from './teams.js';
import { accountRoutes } from './account.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { tokenRoutes } from './tokens.js';
import { appRoutes } from './apps.js';
import { envRoutes } from './env.js';
import { deployRoutes } from './deploys.js';
import { logRoutes } from './logs.js';
import { webhookRoutes } from './webhooks.js';
import { codehostRoutes } from './codehost.js';
import { manifestRoutes } from './manifests.js';
import { backupRoutes } from './backups.js';
import { jobRoutes } from './jobs.js';
import { nodeRoutes } from './nodes.js';
import { metricRoutes } from './metrics.js';
import { execRoutes } from './exec.js';
import { prometheusRoutes } from './prometheus.js';
import { notificationRoutes } from './notifications.js';
import { backupTargetRoutes } from './backup-targets.js';
import { registryRoutes } from './registries.js';
import { stackRoutes } from './stacks.js';
import { templateRoutes } from './templates.js';
import { openApiRoutes } from './openapi/routes.js';

const MiB = 1024 * 1024;
const tooLarge = () => {
  throw tooLargeError('request body is too large');
};

/** `flows`: setup and login, shared with the UI (one login limiter per daemon). */
export function createApi(deps: ApiDeps & { codehost: CredentialsHolder }, flows: AuthFlows): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError(errorHandler(deps.log));
  app.notFound(notFoundHandler);

  app.use('/api/webhooks/*', bodyLimit({ maxSize: 25 * MiB, onError: tooLarge }));
  app.use('/api/*', async (c, next) => {
    if (c.req.path.startsWith('/api/webhooks/') || c.req.path === '/api/backups/import') return next();
    return bodyLimit({ maxSize: MiB, onError: tooLarge })(c, next);
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  // Authentication and permissions are not here: src/http/authorize.ts runs before every route of the
  // server (src/server.ts), REST and UI alike, from the one permission table.
  app.route('/', prometheusRoutes(deps));
  app.route('/api', webhookRoutes(deps));
  app.route('/api', authRoutes(deps, flows));
  app.route('/api', tokenRoutes(deps));
  app.route('/api', accountRoutes(deps, flows));
  app.route('/api', teamRoutes(deps));
  app.route('/api', auditRoutes(deps));
  app.route('/api', appRoutes(deps));
  app.route('/api', envRoutes(deps));
  app.route('/api', deployRoutes(deps));
  app.route('/api', logRoutes(deps));
  app.route('/api', serviceRoutes(deps));
  app.route('/api', serviceBackupRoutes(deps));
  app.route('/api', linkRoutes(deps));
  app.route('/api', codehostRoutes(deps));
  app.route('/api', manifestRoutes(deps));
  app.route('/api', backupRoutes(deps));
  app.route('/api', jobRoutes(deps));
  app.route('/api', nodeRoutes(deps));
  app.route('/api', metricRoutes(deps));
  app.route('/api', execRoutes(deps));
  app.route('/api', notificationRoutes(deps));
  app.route('/api', backupTargetRoutes(deps));
  app.route('/api', registryRoutes(deps));
  app.route('/api', stackRoutes(deps));
  app.route('/api', templateRoutes());
  // Last: the document describes every route above (and itself).
  app.route('/api', openApiRoutes(app));
  return app;
}
