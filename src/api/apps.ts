// App endpoints (API.md "Apps"): thin adapters over the apps command (src/desired/apps.ts), which owns the
// field schemas, the record rules, the write and the enqueue. Reads come from the store.
import { Hono, type Context } from 'hono';
import { eq } from 'drizzle-orm';
import { DomainError, notFound } from '../errors.js';
import { apps } from '../store/schema/index.js';
import { createApp, deleteApp, updateApp } from '../desired/apps.js';
import { getApp, getAppWithDeployVersion } from '../store/apps.js';
import { appDetailJson, appsListJson } from '../presenters/app-json-sql.js';
import { listAppEvents } from '../store/deploys.js';
import { accessUrl, appJson } from '../presenters/app-json.js';
import { previewsWithApps } from '../store/previews.js';
import { previewJson, previewJsonSchema } from '../presenters/previews.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { publicHostname } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { appEventJson } from '../presenters/deploy-json.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { appDetailJsonSchema, appJsonSchema } from '../presenters/app-json.js';
import { appEventJsonSchema } from '../presenters/deploy-json.js';
import { createAppSchema, updateAppSchema } from '../desired/apps.js';

const op = operations('Apps');

const JSON_TYPE = { 'content-type': 'application/json' };

export function appRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const one = (c: Context, id: number) => {
    const found = getAppWithDeployVersion(db, id);
    if (!found) throw notFound('app');
    return appJson(found.app, found.deployedConfigVersion, publicHostname(c, deps.config));
  };

  // The two hot reads come out of SQLite as finished JSON (presenters/app-json-sql.ts): no rows to map, no garbage.
  r.get('/apps', op({ summary: 'List apps, newest first', response: z.array(appJsonSchema) }), (c) => c.body(appsListJson(db, publicHostname(c, deps.config)), 200, JSON_TYPE));

  r.post('/apps', op({ summary: 'Create an app', body: createAppSchema, status: 201, response: appJsonSchema, errors: { 409: 'conflict: the name, domain or port is taken' } }), async (c) => {
    const row = createApp(deps, await jsonBody(c), restOrigin(c));
    return c.json(one(c, row.id), 201);
  });

  // An app's id from its name: what the CLI asks first; a `deploy:<app>` token may ask it for its own app.
  r.get('/app-names/:name', op({ summary: "An app's id from its name", response: z.object({ id: z.number().int(), name: z.string() }) }), (c) => {
    const row = db.select({ id: apps.id, name: apps.name }).from(apps).where(eq(apps.name, c.req.param('name'))).get();
    if (!row) throw new DomainError('not_found', 'not_found', `no app named ${c.req.param('name')}`);
    return c.json(row);
  });

  r.get('/apps/:appID', op({ summary: 'One app with its deploy history', response: appDetailJsonSchema }), (c) => {
    const json = appDetailJson(db, idParam(c, 'appID', 'app'), publicHostname(c, deps.config));
    if (!json) throw notFound('app');
    return c.body(json, 200, JSON_TYPE);
  });

  r.put('/apps/:appID', op({ summary: "Change an app's settings (only the fields sent)", body: updateAppSchema, response: appJsonSchema, errors: { 409: 'conflict: the domain or port is taken, or the app is owned by a manifest' } }), async (c) => {
    const id = idParam(c, 'appID', 'app');
    updateApp(deps, id, await jsonBody(c), restOrigin(c));
    return c.json(one(c, id));
  });

  r.delete('/apps/:appID', op({ summary: 'Delete an app', query: { purge: 'true: remove its volumes too' }, status: 204, errors: { 409: 'conflict: owned by a manifest' } }), (c) => {
    const purge = ['true', '1', 'yes'].includes(c.req.query('purge') ?? '');
    deleteApp(deps, idParam(c, 'appID', 'app'), restOrigin(c), { purge });
    return c.body(null, 204);
  });

  r.get('/apps/:appID/events', op({ summary: "The app's own events (self-heal, drift, jobs)", response: z.array(appEventJsonSchema) }), (c) => {
    const id = idParam(c, 'appID', 'app');
    one(c, id);
    return c.json(listAppEvents(db, id).map(appEventJson));
  });

  // Issue 20: the app's pull-request previews, newest pull request first.
  r.get('/apps/:appID/previews', op({ summary: "The app's pull-request previews, newest pull request first", response: z.array(previewJsonSchema) }), (c) => {
    const id = idParam(c, 'appID', 'app');
    one(c, id);
    const host = publicHostname(c, deps.config);
    return c.json(
      previewsWithApps(db, id)
        .sort((a, b) => b.preview.prNumber - a.preview.prNumber)
        .map((p) => previewJson(p, accessUrl(p, host), getApp(db, p.preview.appId)?.status ?? 'inactive')),
    );
  });

  return r;
}
