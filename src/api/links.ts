// Links between apps and services (API.md "Managed services", links): adapters over the links command
// (src/desired/links.ts). A link changes what the app's next deploy injects.
import { Hono } from 'hono';
import { createLink, deleteLink } from '../desired/links.js';
import { listLinks, requireApp } from '../store/links.js';
import { linkJson, linkJsonSchema } from '../presenters/links.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { linkSchema } from '../desired/links.js';

const op = operations('Services');

export function linkRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/apps/:appID/services', op({ summary: 'Link a service to the app (its variables are injected at the next deploy)', body: linkSchema, status: 201, response: linkJsonSchema, errors: { 409: 'conflict: already linked, or a variable name clashes' } }), async (c) => {
    const appId = idParam(c, 'appID', 'app');
    const v = createLink(deps, appId, await jsonBody(c), restOrigin(c));
    return c.json(linkJson(v), 201);
  });

  r.get('/apps/:appID/services', op({ summary: "The app's links", response: z.array(linkJsonSchema) }), (c) => {
    const appId = idParam(c, 'appID', 'app');
    const views = listLinks(deps.db, appId);
    if (views.length === 0) requireApp(deps.db, appId); // an empty list must not hide a wrong id
    return c.json(views.map(linkJson));
  });

  r.delete('/apps/:appID/services/:serviceID', op({ summary: 'Unlink a service', status: 204 }), (c) => {
    deleteLink(deps, idParam(c, 'appID', 'app'), idParam(c, 'serviceID', 'link'), restOrigin(c));
    return c.body(null, 204);
  });

  return r;
}
