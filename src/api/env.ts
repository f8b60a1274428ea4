// Environment variable endpoints (API.md "Environment variables"): adapters over the env command
// (src/desired/env.ts). Secret values leave the server only through `.../reveal`; every other answer shows
// `value: null` for them. Changes apply at the next deploy.
import { Hono, type Context } from 'hono';
import { notFound } from '../errors.js';
import { deleteEnv, setEnv } from '../desired/env.js';
import { envKeySchema } from '../desired/fields.js';
import { envKeyHistory, listEnv, revealEnv } from '../store/env.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { noteAuditNames } from '../http/audit-names.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { envHistoryJson, envHistorySchema, envJson } from '../presenters/env.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { envJsonSchema } from '../presenters/env.js';
import { setEnvSchema } from '../desired/env.js';

const op = operations('Environment');

/** A key from the path; one that cannot exist is a 404 like any unknown key. */
function keyParam(c: Context): string {
  const parsed = envKeySchema.safeParse(c.req.param('key'));
  if (!parsed.success) throw notFound('environment variable');
  return parsed.data;
}

export function envRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;

  r.post('/apps/:appID/env', op({ summary: 'Set a variable (201 created, 200 changed); applies at the next deploy', body: setEnvSchema, status: 201, response: envJsonSchema, more: { 200: { description: 'An existing variable changed' } }, errors: { 409: 'conflict: the key is injected by a link, or the app is owned by a manifest' } }), async (c) => {
    const appId = idParam(c, 'appID', 'app');
    const { row, created } = setEnv(deps, appId, await jsonBody(c), restOrigin(c), c.var.user.username);
    noteAuditNames(c, row.key);
    return c.json(envJson(row), created ? 201 : 200);
  });

  r.get('/apps/:appID/env', op({ summary: "The app's variables (a secret's value is null)", response: z.array(envJsonSchema) }), (c) => c.json(listEnv(db, idParam(c, 'appID', 'app')).map(envJson)));

  r.delete('/apps/:appID/env/:key', op({ summary: 'Delete a variable', status: 204 }), (c) => {
    deleteEnv(deps, idParam(c, 'appID', 'app'), keyParam(c), restOrigin(c), c.var.user.username);
    return c.body(null, 204);
  });

  r.get('/apps/:appID/env/:key/history', op({ summary: "A variable's changes, newest first", response: z.array(envHistorySchema) }), (c) => {
    return c.json(envKeyHistory(db, idParam(c, 'appID', 'app'), keyParam(c)).map(envHistoryJson));
  });

  r.get('/apps/:appID/env/:key/reveal', op({ summary: "A variable's value, a secret's too (audited)", response: z.object({ key: z.string(), value: z.string() }) }), (c) => {
    const revealed = revealEnv(db, deps.sealer, idParam(c, 'appID', 'app'), keyParam(c));
    deps.log.info('environment variable revealed', { app_id: c.req.param('appID'), variable: revealed.key, by: c.var.user.username });
    c.header('cache-control', 'no-store');
    return c.json(revealed);
  });

  return r;
}
