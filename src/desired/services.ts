// The services command (SPEC.md 2.5, 3.1): create, start, stop and delete managed services, for the REST
// API, the UI and manifest applies. Every write enqueues `service:<name>`; the service reconciler converges
// the engine. Credentials are generated and sealed once, at creation, and deletion is a state (DESIGN.md
// rule 9): the row is marked, the reconciler cleans up and drops it.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { and, eq, isNotNull } from 'drizzle-orm';
import { z } from 'zod';
import { imageFor, isServiceType, kindOf, serviceContainerName, serviceTypes, versionsOf } from '../catalog/catalog.js';
import { newestVersion } from '../catalog/types.js';
import { keyOf } from '../controller/types.js';
import { conflict, invalid, notFound } from '../errors.js';
import { tx, type Db } from '../store/db.js';
import { nowIso, serviceLinks, services, serviceUpgrades, type Owner } from '../store/schema/index.js';
import { toServiceView, type ServiceView } from '../store/service-view.js';
import { bumpConfigVersion, getService, linkedAppNames, SERVICE_NAME, serviceDataDir } from '../store/services.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';

/** The create input; name, type and version get their own sentences below (the valid values are listed). */
export const createServiceSchema = z.object({ name: z.string(), type: z.string(), version: z.union([z.string(), z.number()]).optional() }).strict();

/**
 * Creates a service in `pending`: validates name and type, refuses a name in use (or one whose data dir
 * still holds a former service's data, which the new credentials could not open), generates and seals the
 * credentials, creates the data dir, stores the row and enqueues it. `owner`: 'rest' or a manifest source.
 */
export function createService(ctx: CommandCtx, raw: unknown, origin: Origin, owner: Owner = 'rest'): ServiceView {
  const { db, config } = ctx;
  const input = parseInput(createServiceSchema, raw);
  if (!SERVICE_NAME.test(input.name)) {
    throw invalid('name: must start with a lowercase letter and contain only a-z, 0-9 and -, at most 63 characters');
  }
  if (!isServiceType(input.type)) {
    throw invalid(`type: unknown service type "${input.type}"; valid types: ${serviceTypes.join(', ')}`, { valid_types: [...serviceTypes] });
  }
  // A number is accepted for the manifest's `version: 17`; 8.4 as a number is the same string.
  const version = input.version === undefined ? newestVersion(input.type) : String(input.version);
  if (!versionsOf(input.type).includes(version)) {
    throw invalid(`version: ${input.type} is offered at versions ${versionsOf(input.type).join(', ')}`, { valid_versions: [...versionsOf(input.type)] });
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
  const containerName = serviceContainerName(config.instance, input.name);
  if (db.select({ id: serviceUpgrades.id }).from(serviceUpgrades).where(eq(serviceUpgrades.toContainer, containerName)).get()) {
    throw conflict(`the container name of ${input.name} is held by another service's upgrade; choose another name`);
  }
  const credentials = kind.generateCredentials(input.name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const row = db
    .insert(services)
    .values({
      name: input.name,
      type: input.type,
      version,
      imageRef: imageFor(kind, config.images, version).image,
      desiredRunning: true,
      containerName,
      internalPort: kind.internalPort,
      dataDir,
      credentialsSealed: ctx.sealer.sealJson(credentials),
      owner,
    })
    .returning()
    .get();
  ctx.enqueue(keyOf('service', row.name));
  ctx.log.info('service created', { service: row.name, type: row.type, version, origin });
  return toServiceView(row, null);
}

/** The live service with this id, or a 404. */
function serviceOf(ctx: CommandCtx, id: number): ServiceView {
  const row = getService(ctx.db, id);
  if (!row) throw notFound('service');
  return row;
}

/** Stop (false) or start (true): desired state only; the reconciler stops or starts the container. */
export function setServiceRunning(ctx: CommandCtx, id: number, running: boolean, _origin: Origin): ServiceView {
  const row = serviceOf(ctx, id);
  // A start is a fresh intent: the reconciler forgets the backoff of earlier failures when it sees it.
  const now = nowIso();
  const request = running ? { startRequestedAt: new Date().toISOString() } : {}; // ms: each start is new
  ctx.db.update(services).set({ desiredRunning: running, updatedAt: now, ...request }).where(eq(services.id, row.id)).run();
  ctx.enqueue(keyOf('service', row.name));
  return getService(ctx.db, row.id)!;
}

/**
 * Marks a service deleted (`purge` also removes its data dir). Linked apps refuse it unless `force`, which
 * removes the links and marks those apps' config changed. The reconciler removes the container, the data
 * dir if asked, then the row. A service already being deleted is a 404, like an unknown one.
 */
export function deleteService(ctx: CommandCtx, id: number, opts: { purge: boolean; force: boolean }, origin: Origin): void {
  const { db } = ctx;
  const row = serviceOf(ctx, id);
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
  for (const app of linked) ctx.enqueue(keyOf('app', app.name));
  ctx.enqueue(keyOf('service', row.name));
  ctx.log.info('service deletion requested', { service: row.name, purge: opts.purge, origin });
}

/**
 * Drops the row of a service marked deleted, once the service reconciler removed its container (and its
 * data, if asked): the end of deletion as a state (DESIGN.md rule 9), a finalizer's release. A row not
 * marked deleted is kept. Returns true when the row went.
 */
export function forgetDeletedService(db: Db, id: number): boolean {
  return db.delete(services).where(and(eq(services.id, id), isNotNull(services.deletedAt))).run().changes > 0;
}
