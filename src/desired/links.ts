// The links command (SPEC.md 2.6): link a service to an app, or unlink it, for the REST API, the UI and
// manifest applies. A link is desired state of the app: it bumps the app's config version (so it shows
// `config_changed`) and enqueues it; the variables take effect at the next deploy.
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { envKeys, kindOf } from '../catalog/catalog.js';
import { keyOf } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import { tx } from '../store/db.js';
import { listLinks, requireApp, type LinkView } from '../store/links.js';
import { serviceLinks } from '../store/schema/index.js';
import { bumpConfigVersion, getService } from '../store/services.js';
import type { CommandCtx, Origin } from './context.js';
import { aliasSchema } from './fields.js';
import { parseInput } from './parse.js';

export const linkSchema = z.object({ service_id: z.number().int().positive(), alias: aliasSchema.nullish() }).strict();

/**
 * Links a service to an app. 404 for a missing app or service; 409 for a second link of the same pair,
 * or when the new link's variable names collide with another link of the app (two postgres without
 * alias both want SQLA_*; the alias is the way out).
 */
export function createLink(ctx: CommandCtx, appId: number, raw: unknown, _origin: Origin): LinkView {
  const { db } = ctx;
  const input = parseInput(linkSchema, raw);
  const app = requireApp(db, appId);
  const service = getService(db, input.service_id);
  if (!service) throw notFound('service');
  const alias = input.alias || null;
  const keys = envKeys(kindOf(service.type), alias);
  const existing = listLinks(db, app.id);
  if (existing.some((l) => l.service.id === service.id)) throw conflict(`service ${service.name} is already linked to app ${app.name}`);
  for (const other of existing) {
    const clash = keys.filter((k) => other.envKeys.includes(k));
    if (clash.length > 0) {
      throw conflict(`variables ${clash.join(', ')} would also come from service ${other.service.name}; choose another alias`, {
        colliding_keys: clash,
        service_id: other.service.id,
      });
    }
  }
  const link = tx(db, () => {
    const row = db.insert(serviceLinks).values({ appId: app.id, serviceId: service.id, alias }).returning().get();
    bumpConfigVersion(db, app.id);
    return row;
  });
  ctx.enqueue(keyOf('app', app.name));
  return { link, service, envKeys: keys };
}

/** Removes a link; 404 when the app or the link does not exist. */
export function deleteLink(ctx: CommandCtx, appId: number, serviceId: number, _origin: Origin): void {
  const { db } = ctx;
  const app = requireApp(db, appId);
  const removed = tx(db, () => {
    const r = db.delete(serviceLinks).where(and(eq(serviceLinks.appId, app.id), eq(serviceLinks.serviceId, serviceId))).run();
    if (r.changes > 0) bumpConfigVersion(db, app.id);
    return r.changes;
  });
  if (removed === 0) throw notFound('link');
  ctx.enqueue(keyOf('app', app.name));
}
