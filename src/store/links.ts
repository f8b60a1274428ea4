// App-to-service links (SPEC.md 2.6) and the variables they inject. A link is desired state of the app:
// creating or removing one bumps the app's config version (so it shows `config_changed`) and enqueues it;
// the variables take effect at the next deploy, which reads them through `linkedServiceEnv`.
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import { envKeys, injectedEnv, kindOf } from '../catalog/catalog.js';
import { tx, type Db } from './db.js';
import { apps, serviceLinks, services, type ServiceLinkRow, type ServiceRow } from './schema/index.js';
import { bumpConfigVersion, openCredentials } from './services.js';

export interface LinkView {
  link: ServiceLinkRow;
  service: ServiceRow;
  envKeys: string[];
}

/** The live app with this id, or a 404. */
export const requireApp = (db: Db, appId: number) => {
  const app = db.select({ id: apps.id, name: apps.name }).from(apps).where(eq(apps.id, appId)).get();
  if (!app) throw notFound('app');
  return app;
};

/** Links of an app with their live services, oldest first (the order variables are injected in). */
export function listLinks(db: Db, appId: number): LinkView[] {
  return db
    .select()
    .from(serviceLinks)
    .innerJoin(services, eq(services.id, serviceLinks.serviceId))
    .where(and(eq(serviceLinks.appId, appId), isNull(services.deletedAt)))
    .orderBy(asc(serviceLinks.id))
    .all()
    .map((r) => ({ link: r.service_links, service: r.services, envKeys: envKeys(kindOf(r.services.type), r.service_links.alias) }));
}

/**
 * Links a service to an app. 404 for a missing app or service; 409 for a second link of the same pair,
 * or when the new link's variable names collide with another link of the app (two postgres without
 * alias both want SQLA_*; the alias is the way out).
 */
export function createLink(db: Db, enqueue: Enqueue, input: { appId: number; serviceId: number; alias?: string | null }): LinkView {
  const app = requireApp(db, input.appId);
  const service = db.select().from(services).where(and(eq(services.id, input.serviceId), isNull(services.deletedAt))).get();
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
  enqueue(keyOf('app', app.name));
  return { link, service, envKeys: keys };
}

/** Removes a link; 404 when the app or the link does not exist. */
export function deleteLink(db: Db, enqueue: Enqueue, appId: number, serviceId: number): void {
  const app = requireApp(db, appId);
  const removed = tx(db, () => {
    const r = db.delete(serviceLinks).where(and(eq(serviceLinks.appId, app.id), eq(serviceLinks.serviceId, serviceId))).run();
    if (r.changes > 0) bumpConfigVersion(db, app.id);
    return r.changes;
  });
  if (removed === 0) throw notFound('link');
  enqueue(keyOf('app', app.name));
}

/**
 * The variables to inject into an app's containers at deploy time: every linked live service's connection
 * values, decrypted, under its prefix or alias. Secrets: callers must not log the values.
 */
export function linkedServiceEnv(db: Db, sealer: Sealer, appId: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { link, service } of listLinks(db, appId)) {
    const creds = openCredentials(sealer, service);
    const place = { name: service.name, host: service.containerName, dataDir: service.dataDir };
    Object.assign(out, injectedEnv(kindOf(service.type), creds, place, link.alias));
  }
  return out;
}
