// The JSON shape of a link between an app and a service, with a short summary of its service (never credentials).
import { z } from 'zod';
import type { LinkView } from '../store/links.js';

export const linkJsonSchema = z.object({
  app_id: z.number().int(), service_id: z.number().int(), alias: z.string().nullable(), env_keys: z.array(z.string()),
  service: z.object({ id: z.number().int(), name: z.string(), type: z.string(), status: z.string(), container_name: z.string() }),
  created_at: z.string(),
});

/** The API shape of a link, with a short summary of its service (never credentials). */
export function linkJson(v: LinkView) {
  return {
    app_id: v.link.appId,
    service_id: v.link.serviceId,
    alias: v.link.alias,
    env_keys: v.envKeys,
    service: { id: v.service.id, name: v.service.name, type: v.service.type, status: v.service.status, container_name: v.service.containerName },
    created_at: v.link.createdAt,
  };
}
