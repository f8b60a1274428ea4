// Desired state of managed services (SPEC.md 2.5, 3.1). Every write here enqueues `service:<name>`; the
// service reconciler converges the engine. Credentials are generated and sealed once, at creation, and
// deletion is a state (DESIGN.md rule 9): the row is marked, the reconciler cleans up and drops it.
import { mkdirSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Sealer } from '../crypto.js';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import { ApiError, conflict } from '../errors.js';
import { isServiceType, kindOf, serviceContainerName, serviceTypes, type Credentials } from '../catalog/catalog.js';
import { tx, type Db } from './db.js';
import { apps, nowIso, serviceLinks, services, type Owner, type ServiceRow } from './schema/index.js';

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

export interface NewService {
  name: string;
  type: string;
  owner?: Owner;
}

/**
 * Creates a service in `pending`: validates name and type, refuses a name in use (or one whose data dir
 * still holds a former service's data, which the new credentials could not open), generates and seals the
 * credentials, creates the data dir, stores the row and enqueues it.
 */
export function createService(
  db: Db,
  sealer: Sealer,
  enqueue: Enqueue,
  config: Pick<Config, 'dataDir' | 'images' | 'instance'>,
  input: NewService,
): ServiceRow {
  if (!SERVICE_NAME.test(input.name)) {
    throw new ApiError(400, 'invalid_request', 'name: must start with a lowercase letter and contain only a-z, 0-9 and -, at most 63 characters');
  }
  if (!isServiceType(input.type)) {
    throw new ApiError(400, 'invalid_request', `type: unknown service type "${input.type}"; valid types: ${serviceTypes.join(', ')}`, {
      valid_types: [...serviceTypes],
    });
  }
  const existing = db.select().from(services).where(eq(services.name, input.name)).get();
  if (existing) {
    throw conflict(existing.deletedAt ? `service ${input.name} is being deleted; try again shortly` : `a service named ${input.name} already exists`);
  }
  const dataDir = serviceDataDir(config.dataDir, input.name);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw conflict(`the data directory of ${input.name} still holds a former service's data; remove ${dataDir} or choose another name`);
  }
  const kind = kindOf(input.type);
  const credentials = kind.generateCredentials(input.name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const row = db
    .insert(services)
    .values({
      name: input.name,
      type: input.type,
      imageRef: kind.image(config.images),
      status: 'pending',
      desiredRunning: true,
      containerName: serviceContainerName(config.instance, input.name),
      internalPort: kind.internalPort,
      dataDir,
      credentialsSealed: sealer.sealJson(credentials),
      owner: input.owner ?? 'rest',
    })
    .returning()
    .get();
  enqueue(keyOf('service', row.name));
  return row;
}

/** A live (not deleted) service by id. */
export const getService = (db: Db, id: number): ServiceRow | undefined =>
  db.select().from(services).where(and(eq(services.id, id), isNull(services.deletedAt))).get();

export const getServiceByName = (db: Db, name: string): ServiceRow | undefined =>
  db.select().from(services).where(eq(services.name, name)).get();

/** Live services, newest first. */
export const listServices = (db: Db): ServiceRow[] =>
  db.select().from(services).where(isNull(services.deletedAt)).orderBy(desc(services.id)).all();

/** The decrypted credentials; only the credentials endpoint, env injection and the reconciler call it. */
export const openCredentials = (sealer: Sealer, row: Pick<ServiceRow, 'credentialsSealed'>): Credentials =>
  sealer.openJson<Credentials>(row.credentialsSealed);

/** Stop (false) or start (true): desired state only; the reconciler stops or starts the container. */
export function setDesiredRunning(db: Db, enqueue: Enqueue, row: ServiceRow, running: boolean): ServiceRow {
  // A start is a fresh intent: forget the backoff of earlier failures.
  const reset = running ? { healFailures: 0, healNotBefore: null } : {};
  const updated = db
    .update(services)
    .set({ desiredRunning: running, updatedAt: nowIso(), ...reset })
    .where(eq(services.id, row.id))
    .returning()
    .get();
  enqueue(keyOf('service', row.name));
  return updated;
}

/** Names of the apps linked to a service. */
export function linkedAppNames(db: Db, serviceId: number): { id: number; name: string }[] {
  return db
    .select({ id: apps.id, name: apps.name })
    .from(serviceLinks)
    .innerJoin(apps, eq(apps.id, serviceLinks.appId))
    .where(eq(serviceLinks.serviceId, serviceId))
    .all();
}

/**
 * Marks a service deleted (`purge` also removes its data dir). Linked apps refuse it unless `force`, which
 * removes the links and marks those apps' config changed. The reconciler removes the container, the data
 * dir if asked, then the row.
 */
export function markServiceDeleted(db: Db, enqueue: Enqueue, row: ServiceRow, opts: { purge: boolean; force: boolean }): void {
  const linked = linkedAppNames(db, row.id);
  if (linked.length > 0 && !opts.force) {
    throw conflict(`service ${row.name} is linked to ${linked.map((a) => a.name).join(', ')}; unlink it first or use ?force=true`, {
      linked_apps: linked.map((a) => a.id),
    });
  }
  tx(db, () => {
    db.delete(serviceLinks).where(eq(serviceLinks.serviceId, row.id)).run();
    for (const app of linked) bumpConfigVersion(db, app.id);
    db.update(services)
      .set({ deletedAt: nowIso(), purgeOnDelete: opts.purge, desiredRunning: false, updatedAt: nowIso() })
      .where(eq(services.id, row.id))
      .run();
  });
  for (const app of linked) enqueue(keyOf('app', app.name));
  enqueue(keyOf('service', row.name));
}

/** An env or link change: the app shows `config_changed` until its next deploy. */
export function bumpConfigVersion(db: Db, appId: number): void {
  db.update(apps).set({ configVersion: sql`${apps.configVersion} + 1`, updatedAt: nowIso() }).where(eq(apps.id, appId)).run();
}
