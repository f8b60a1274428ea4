// Joins the per-resource sub-apps into the one hono app the daemon serves. Order matters: limits and
// error handling first, public routes, then the auth wall, then everything that needs a user.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import { errorHandler, notFoundHandler } from './errors.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { serviceRoutes } from './services.js';
import { linkRoutes } from './links.js';

const MiB = 1024 * 1024;
const tooLarge = () => {
  throw new ApiError(413, 'too_large', 'request body is too large');
};

export function createApi(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError(errorHandler(deps.log));
  app.notFound(notFoundHandler);

  app.use('/api/webhooks/*', bodyLimit({ maxSize: 25 * MiB, onError: tooLarge }));
  app.use('/api/*', async (c, next) => {
    if (c.req.path.startsWith('/api/webhooks/') || c.req.path === '/api/backups/import') return next();
    return bodyLimit({ maxSize: MiB, onError: tooLarge })(c, next);
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/api', serviceRoutes(deps)).route('/api', linkRoutes(deps));
  return app;
}
