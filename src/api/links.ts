// Links between apps and services (API.md "Managed services", links). A link changes what the app's next
// deploy injects; the store bumps the app's config version so it shows `config_changed` until then.
import { Hono } from 'hono';
import { z } from 'zod';
import { createLink, deleteLink, listLinks, requireApp, type LinkView } from '../store/links.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { aliasSchema, body, idParam } from './validate.js';

export const linkSchema = z.object({ service_id: z.number().int().positive(), alias: aliasSchema.nullish() }).strict();

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
    const input = await body(c, linkSchema);
    const v = createLink(deps.db, deps.enqueue, { appId, serviceId: input.service_id, alias: input.alias });
    return c.json(linkJson(v), 201);
  });

  r.get('/apps/:appID/services', (c) => {
    const appId = idParam(c, 'appID', 'app');
    const views = listLinks(deps.db, appId);
    if (views.length === 0) requireApp(deps.db, appId); // an empty list must not hide a wrong id
    return c.json(views.map(linkJson));
  });

  r.delete('/apps/:appID/services/:serviceID', (c) => {
    deleteLink(deps.db, deps.enqueue, idParam(c, 'appID', 'app'), idParam(c, 'serviceID', 'link'));
    return c.body(null, 204);
  });

  return r;
}
