// API tokens (API.md "Authentication"): created, listed and revoked by the logged-in user. The token is
// in the 201 answer only; lists show names and dates.
import { Hono } from 'hono';
import { z } from 'zod';
import { createApiToken, deleteApiToken, listApiTokens } from '../store/tokens.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { body, idParam } from './validate.js';

export const createSchema = z.object({ name: z.string().trim().min(1).max(100) }).strict();

export function tokenRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/tokens', async (c) => {
    const input = await body(c, createSchema);
    const created = createApiToken(deps.db, c.var.user.id, input.name, deps.now());
    deps.log.info('api token created', { token_id: created.id, name: created.name });
    c.header('cache-control', 'no-store');
    return c.json(created, 201);
  });

  r.get('/tokens', (c) => c.json(listApiTokens(deps.db, c.var.user.id)));

  r.delete('/tokens/:id', (c) => {
    deleteApiToken(deps.db, c.var.user.id, idParam(c, 'id', 'token'));
    return c.body(null, 204);
  });

  return r;
}
