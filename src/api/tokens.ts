// API tokens (docs/api.md "Teams"): adapters over the tokens command (src/desired/tokens.ts). The token is
// in the 201 answer only; lists show names, scopes, expiry and last use.
import { Hono } from 'hono';
import { createToken, deleteToken } from '../desired/tokens.js';
import { listApiTokens } from '../store/tokens.js';
import { idParam, jsonBody } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { createdTokenJsonSchema, tokenJsonSchema } from '../presenters/account-json.js';
import { createTokenSchema } from '../desired/tokens.js';

const op = operations('Account');

export function tokenRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/tokens', op({ summary: 'Create an API token (the token is in this answer only)', body: createTokenSchema, status: 201, response: createdTokenJsonSchema, errors: { 403: 'forbidden: a scope beyond your role', 409: 'conflict: you have a token of that name' } }), async (c) => {
    const created = createToken(deps, c.var.user, await jsonBody(c));
    c.header('cache-control', 'no-store');
    return c.json(created, 201);
  });

  r.get('/tokens', op({ summary: 'Your API tokens', response: z.array(tokenJsonSchema) }), (c) => c.json(listApiTokens(deps.db, c.var.user.id)));

  r.delete('/tokens/:id', op({ summary: 'Revoke one of your tokens', status: 204 }), (c) => {
    deleteToken(deps, c.var.user.id, idParam(c, 'id', 'token'));
    return c.body(null, 204);
  });

  return r;
}
