// Links between apps and services (API.md "Managed services", links): adapters over the links command
// (src/desired/links.ts). A link changes what the app's next deploy injects.
import { Hono } from 'hono';
import { createLink, deleteLink } from '../desired/links.js';
import { listLinks, requireApp, type LinkView } from '../store/links.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';

/** The API shape of a link, with a short summary of its service (never credentials). */
function linkJson(v: LinkView) {
  return {
    app_id: v.link.appId,
    service_id: v.link.serviceId,
    alias: v.link.alias,
    env_keys: v.envKeys,
    service: { id: v.service.id, name: v.service.name, type: v.service.type, status: v.service.status, container_name: v.service.containerName },
    created_at: v.link.createdAt,
  };
}

export function linkRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/apps/:appID/services', async (c) => {
    const appId = idParam(c, 'appID', 'app');
    const v = createLink(deps, appId, await jsonBody(c), restOrigin(c));
    return c.json(linkJson(v), 201);
  });

  r.get('/apps/:appID/services', (c) => {
    const appId = idParam(c, 'appID', 'app');
    const views = listLinks(deps.db, appId);
    if (views.length === 0) requireApp(deps.db, appId); // an empty list must not hide a wrong id
    return c.json(views.map(linkJson));
  });

  r.delete('/apps/:appID/services/:serviceID', (c) => {
    deleteLink(deps, idParam(c, 'appID', 'app'), idParam(c, 'serviceID', 'link'), restOrigin(c));
    return c.body(null, 204);
  });

  return r;
}
