// Environment variable endpoints (API.md "Environment variables"): adapters over the env command
// (src/desired/env.ts). Secret values leave the server only through `.../reveal`; every other answer shows
// `value: null` for them. Changes apply at the next deploy.
import { Hono, type Context } from 'hono';
import { notFound } from '../errors.js';
import { deleteEnv, setEnv } from '../desired/env.js';
import { envKeySchema } from '../desired/fields.js';
import { envKeyHistory, listEnv, revealEnv } from '../store/env.js';
import type { EnvVarRow } from '../store/schema/index.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { noteAuditNames } from '../http/audit-names.js';
import type { ApiDeps, ApiEnv } from './deps.js';

/** The API shape of a variable: a secret's value is never in it. */
export const envJson = (v: EnvVarRow) => ({
  key: v.key,
  value: v.isSecret ? null : v.value,
  is_secret: v.isSecret,
  required: v.required,
  /** No value (a secret's too, without revealing it): a required empty variable blocks deploys. */
  empty: v.isSecret ? v.secretSealed === null : !v.value,
  updated_at: v.updatedAt,
});

/** A key from the path; one that cannot exist is a 404 like any unknown key. */
function keyParam(c: Context): string {
  const parsed = envKeySchema.safeParse(c.req.param('key'));
  if (!parsed.success) throw notFound('environment variable');
  return parsed.data;
}

export function envRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;

  r.post('/apps/:appID/env', async (c) => {
    const appId = idParam(c, 'appID', 'app');
    const { row, created } = setEnv(deps, appId, await jsonBody(c), restOrigin(c), c.var.user.username);
    noteAuditNames(c, row.key);
    return c.json(envJson(row), created ? 201 : 200);
  });

  r.get('/apps/:appID/env', (c) => c.json(listEnv(db, idParam(c, 'appID', 'app')).map(envJson)));

  r.delete('/apps/:appID/env/:key', (c) => {
    deleteEnv(deps, idParam(c, 'appID', 'app'), keyParam(c), restOrigin(c), c.var.user.username);
    return c.body(null, 204);
  });

  r.get('/apps/:appID/env/:key/history', (c) => {
    const rows = envKeyHistory(db, idParam(c, 'appID', 'app'), keyParam(c));
    return c.json(
      rows.map((h) => ({
        key: h.key,
        action: h.action,
        is_secret: h.isSecret,
        required: h.required,
        value: h.isSecret ? null : h.value,
        changed_at: h.changedAt,
        changed_by: h.changedBy,
      })),
    );
  });

  r.get('/apps/:appID/env/:key/reveal', (c) => {
    const revealed = revealEnv(db, deps.sealer, idParam(c, 'appID', 'app'), keyParam(c));
    deps.log.info('environment variable revealed', { app_id: c.req.param('appID'), variable: revealed.key, by: c.var.user.username });
    c.header('cache-control', 'no-store');
    return c.json(revealed);
  });

  return r;
}
