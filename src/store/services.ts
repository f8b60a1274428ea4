// Managed service rows (SPEC.md 2.5): reads, the credentials, and the derived paths. The writes of a
// service's desired state are the services command's (src/desired/services.ts).
import { join } from 'node:path';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import { kindOf, serviceContainerName, type Credentials } from '../catalog/catalog.js';
import { garageKey } from '../catalog/garage.js';
import type { Db } from './db.js';
import { apps, nowIso, serviceLinks, services, type ServiceRow } from './schema/index.js';
import { selectServiceViews, viewOf, type ServiceView } from './service-view.js';

export const SERVICE_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** `<dataDir>/services/<name>`: the host directory that holds a service's data (SPEC.md 2.5 rule 4). */
export const serviceDataDir = (dataDir: string, name: string) => join(dataDir, 'services', name);

/**
 * Points every service's `data_dir` at `<dataDir>/services/<name>` and its `container_name` at this
 * instance's name. Both columns are derived but stored, so a database restored on another host (or a data
 * directory moved, or another SVC_INSTANCE) would otherwise mount a path that no longer exists, starting
 * the service empty beside its restored data, or claim a container name of another instance.
 * Returns the rows changed.
 */
export function rebaseServices(db: Db, where: { dataDir: string; instance: string }): number {
  let changed = 0;
  for (const row of db.select({ id: services.id, name: services.name, dataDir: services.dataDir, containerName: services.containerName }).from(services).all()) {
    const want = { dataDir: serviceDataDir(where.dataDir, row.name), containerName: serviceContainerName(where.instance, row.name) };
    if (row.dataDir !== want.dataDir || row.containerName !== want.containerName) {
      changed += db.update(services).set(want).where(eq(services.id, row.id)).run().changes;
    }
  }
  return changed;
}

/**
 * Gives a Garage service made before svc generated its access key (its credentials hold an empty one, to be
 * filled by provisioning then) a key of its own, sealed into its credentials, which provisioning imports.
 * Run at start and after a restore, like rebaseServices, before any reconcile. Returns the rows changed.
 */
export function sealMissingGarageKeys(db: Db, sealer: Sealer): number {
  let changed = 0;
  for (const row of db.select({ id: services.id, sealed: services.credentialsSealed }).from(services).where(eq(services.type, 'garage')).all()) {
    const creds = sealer.openJson<Credentials>(row.sealed);
    if (creds.access_key && creds.secret_key) continue;
    const next = { ...creds, ...garageKey() };
    changed += db.update(services).set({ credentialsSealed: sealer.sealJson(next) }).where(eq(services.id, row.id)).run().changes;
  }
  return changed;
}

/** A live (not deleted) service by id, with its observed status. */
export function getService(db: Db, id: number): ServiceView | undefined {
  const r = selectServiceViews(db).where(and(eq(services.id, id), isNull(services.deletedAt))).get();
  return r && viewOf(r);
}

/** A service by name (deleted ones too), with its observed status. */
export function getServiceByName(db: Db, name: string): ServiceView | undefined {
  const r = selectServiceViews(db).where(eq(services.name, name)).get();
  return r && viewOf(r);
}

/** Live services, newest first, with their observed status. */
export const listServices = (db: Db): ServiceView[] =>
  selectServiceViews(db).where(isNull(services.deletedAt)).orderBy(desc(services.id)).all().map(viewOf);

/** The decrypted credentials; only the credentials endpoint, env injection and the reconciler call it. */
export const openCredentials = (sealer: Sealer, row: Pick<ServiceRow, 'credentialsSealed'>): Credentials =>
  sealer.openJson<Credentials>(row.credentialsSealed);

/** Names of the apps linked to a service. */
export function linkedAppNames(db: Db, serviceId: number): { id: number; name: string }[] {
  return db
    .select({ id: apps.id, name: apps.name })
    .from(serviceLinks)
    .innerJoin(apps, eq(apps.id, serviceLinks.appId))
    .where(eq(serviceLinks.serviceId, serviceId))
    .all();
}

/** An env or link change: the app shows `config_changed` until its next deploy. */
export function bumpConfigVersion(db: Db, appId: number): void {
  db.update(apps).set({ configVersion: sql`${apps.configVersion} + 1`, updatedAt: nowIso() }).where(eq(apps.id, appId)).run();
}

/** The decrypted connection values of a service (SPEC.md 2.5 fields): the credentials endpoint and the UI's "Show credentials". */
export function serviceCredentials(sealer: Sealer, row: ServiceRow) {
  const place = { name: row.name, host: row.containerName, dataDir: row.dataDir };
  return kindOf(row.type).credentialFields(openCredentials(sealer, row), place);
}
