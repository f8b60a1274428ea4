// App-to-service links (SPEC.md 2.6): the reads, and the variables they inject at the next deploy
// (`linkedServiceEnv`). Creating and removing links is the links command's (src/desired/links.ts).
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import { notFound } from '../errors.js';
import { envKeys, injectedEnv, kindOf } from '../catalog/catalog.js';
import type { Db } from './db.js';
import { apps, serviceLinks, services, serviceStatus, type ServiceLinkRow } from './schema/index.js';
import { toServiceView, type ServiceView } from './service-view.js';
import { openCredentials } from './services.js';

export interface LinkView {
  link: ServiceLinkRow;
  service: ServiceView;
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
    .leftJoin(serviceStatus, eq(serviceStatus.serviceId, services.id))
    .where(and(eq(serviceLinks.appId, appId), isNull(services.deletedAt)))
    .orderBy(asc(serviceLinks.id))
    .all()
    .map((r) => ({ link: r.service_links, service: toServiceView(r.services, r.service_status), envKeys: envKeys(kindOf(r.services.type), r.service_links.alias) }));
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
