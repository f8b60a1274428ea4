// API tokens (docs/api.md "Teams"): adapters over the tokens command (src/desired/tokens.ts). The token is
// in the 201 answer only; lists show names, scopes, expiry and last use.
import { Hono } from 'hono';
import { createToken, deleteToken } from '../desired/tokens.js';
import { listApiTokens } from '../store/tokens.js';
import { idParam, jsonBody } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';

export function tokenRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/tokens', async (c) => {
    const created = createToken(deps, c.var.user, await jsonBody(c));
    c.header('cache-control', 'no-store');
    return c.json(created, 201);
  });

  r.get('/tokens', (c) => c.json(listApiTokens(deps.db, c.var.user.id)));

  r.delete('/tokens/:id', (c) => {
    deleteToken(deps, c.var.user.id, idParam(c, 'id', 'token'));
    return c.body(null, 204);
  });

  return r;
}
