// Deploy records and their events: the persisted state machine the app reconciler advances. Creating a
// deploy is a desired-state write that only the deploys command (src/desired/deploys.ts) asks for, after
// its checks; everything else here is written by the reconciler.
import { and, asc, desc, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import type { Bus } from '../controller/bus.js';
import { tx, type Db } from './db.js';
import { perDb } from './prepared.js';
import { appEvents, apps, deployEvents, deploys, nowIso, type DeployRow, type DeployTrigger, type EventLevel, type Origin } from './schema/index.js';

export interface NewDeploy {
  appId: number;
  appName: string;
  imageRef: string | null;
  commitSha?: string | null;
  trigger: DeployTrigger;
  /** The entry point that asked (default `api`). */
  origin?: Origin;
  /**
   * A rollback: the deploy it runs again. Its image pin, provider port, environment snapshot and config
   * version are copied onto the new record, so the rollback runs what that deploy ran (its image is
   * `imageRef`, pinned to the very image that deploy's containers ran when the runtime recorded it).
   */
  rollbackOf?: Pick<DeployRow, 'imagePin' | 'buildPort' | 'envSnapshotSealed' | 'configVersion' | 'stackService'>;
}

/**
 * Queues a deploy. Older deploys still `pending` for the app are superseded (`cancelled`): only the
 * newest queued intent matters, and the one running finishes first (API.md "Deploys").
 */
export function createDeploy(db: Db, enqueue: Enqueue, bus: Bus | undefined, input: NewDeploy): DeployRow {
  const row = tx(db, () => {
    const superseded = db
      .select({ id: deploys.id })
      .from(deploys)
      .where(and(eq(deploys.appId, input.appId), eq(deploys.status, 'pending')))
      .all();
    // A stack service's deploy runs the definition its app has now (a rollback: the one it runs again).
    const stackService = input.rollbackOf
      ? (input.rollbackOf.stackService ?? null)
      : (db.select({ s: apps.stackService }).from(apps).where(eq(apps.id, input.appId)).get()?.s ?? null);
    const created = db
      .insert(deploys)
      .values({
        appId: input.appId,
        imageRef: input.imageRef,
        commitSha: input.commitSha ?? null,
        trigger: input.trigger,
        origin: input.origin ?? 'api',
        status: 'pending',
        stackService,
        ...(input.rollbackOf ? { imagePin: input.rollbackOf.imagePin ?? null, buildPort: input.rollbackOf.buildPort, envSnapshotSealed: input.rollbackOf.envSnapshotSealed, configVersion: input.rollbackOf.configVersion } : {}),
      })
      .returning()
      .get();
    if (superseded.length > 0) {
      const now = nowIso();
      db.update(deploys)
        .set({ status: 'cancelled', completedAt: now, error: `superseded by deploy ${created.id}` })
        .where(inArray(deploys.id, superseded.map((s) => s.id)))
        .run();
      for (const s of superseded) {
        db.insert(deployEvents)
          .values({ deployId: s.id, timestamp: now, level: 'warn', step: 'cancelled', message: `superseded by deploy ${created.id}` })
          .run();
      }
    }
    return { created, superseded };
  });
  for (const s of row.superseded) bus?.emit('deploy', s.id);
  enqueue(keyOf('app', input.appName));
  return row.created;
}

const byId = perDb((db) => db.select().from(deploys).where(eq(deploys.id, sql.placeholder('id'))).prepare());
export const getDeploy = (db: Db, id: number): DeployRow | undefined => byId(db).get({ id });

/** Full history of an app, newest first. */
export const listDeploys = (db: Db, appId: number) =>
  db.select().from(deploys).where(eq(deploys.appId, appId)).orderBy(desc(deploys.id)).all();

/** The deploy the pipeline works on: the running one, else the oldest pending. */
const openOf = perDb((db) =>
  db
    .select()
    .from(deploys)
    .where(and(eq(deploys.appId, sql.placeholder('appId')), inArray(deploys.status, ['running', 'pending'])))
    .orderBy(asc(deploys.id))
    .prepare(),
);
export function activeDeploy(db: Db, appId: number): DeployRow | undefined {
  const open = openOf(db).all({ appId });
  return open.find((d) => d.status === 'running') ?? open[0];
}

/** The deploy whose watch window is open (at most one per app: a newer deploy closes it before it begins). */
const watchedOf = perDb((db) => db.select().from(deploys).where(and(eq(deploys.appId, sql.placeholder('appId')), isNotNull(deploys.watchUntil))).orderBy(desc(deploys.id)).limit(1).prepare());
export const watchedDeploy = (db: Db, appId: number): DeployRow | undefined => watchedOf(db).get({ appId });

/**
 * Deploys whose old version still drains after their switch (issue 37), oldest first: any number per app,
 * since a newer deploy never waits for an older one's drain.
 */
const drainingOf = perDb((db) => db.select().from(deploys).where(and(eq(deploys.appId, sql.placeholder('appId')), isNotNull(deploys.drainUntil))).orderBy(deploys.id).prepare());
export const drainingDeploys = (db: Db, appId: number): DeployRow[] => drainingOf(db).all({ appId });

/** The newest successful deploy. */
export function lastSuccessful(db: Db, appId: number): DeployRow | undefined {
  return db
    .select()
    .from(deploys)
    .where(and(eq(deploys.appId, appId), eq(deploys.status, 'success')))
    .orderBy(desc(deploys.id))
    .get();
}

/**
 * What a rollback would deploy: the newest successful deploy whose image differs from the live one's. The
 * rollback command and the app page (which offers Rollback only when there is one) both ask this. Two
 * deploys of one reference ran different images when both were pinned and the pins differ (a tag moved
 * between them: `web:latest` pulled again), so the older one is a target too.
 */
export function rollbackTarget(db: Db, appId: number, currentDeployId: number | null): DeployRow | undefined {
  const live = currentDeployId ? getDeploy(db, currentDeployId) : undefined;
  const rows = db
    .select()
    .from(deploys)
    .where(and(eq(deploys.appId, appId), eq(deploys.status, 'success')))
    .orderBy(desc(deploys.id))
    .all();
  return rows.find((d) => d.imageRef && !sameImage(d, live));
}

/** Pure: whether two deploys ran the same image (by pin when both have one, else by reference). */
export function sameImage(a: Pick<DeployRow, 'imageRef' | 'imagePin'>, b: Pick<DeployRow, 'imageRef' | 'imagePin'> | undefined): boolean {
  if (!b) return false;
  if (a.imageRef !== b.imageRef) return false;
  return !a.imagePin || !b.imagePin || a.imagePin === b.imagePin;
}

/** Status of the newest deploy that finished (cancelled ones do not count), for the app status rules. */
export function newestFinishedStatus(db: Db, appId: number): string | undefined {
  return db
    .select({ status: deploys.status })
    .from(deploys)
    .where(and(eq(deploys.appId, appId), inArray(deploys.status, ['success', 'failed', 'auto_rollback'])))
    .orderBy(desc(deploys.id))
    .limit(1)
    .get()?.status;
}

/** The newest deploy that finished (cancelled ones do not count): its status and error, for the app status. */
// Prepared: every steady pass of the app reconciler (each env write's among them) reads it.
const newestFinishedOf = perDb((db) =>
  db
    .select({ status: deploys.status, error: deploys.error })
    .from(deploys)
    .where(and(eq(deploys.appId, sql.placeholder('appId')), inArray(deploys.status, ['success', 'failed', 'auto_rollback'])))
    .orderBy(desc(deploys.id))
    .limit(1)
    .prepare(),
);
export function newestFinished(db: Db, appId: number): { status: string; error: string | null } | undefined {
  return newestFinishedOf(db).get({ appId });
}

/** Writes the fields that changed and tells live viewers. */
export function updateDeploy(db: Db, bus: Bus | undefined, id: number, patch: Partial<DeployRow>): void {
  db.update(deploys).set(patch).where(eq(deploys.id, id)).run();
  bus?.emit('deploy', id);
}

export function addDeployEvent(db: Db, bus: Bus | undefined, deployId: number, step: string, message: string, level: EventLevel = 'info') {
  const row = db.insert(deployEvents).values({ deployId, timestamp: nowIso(), level, step, message }).returning().get();
  bus?.emit('deploy', deployId);
  return row;
}

/** Events of a deploy, oldest first, optionally only those after an event id (stream resume). */
export const listDeployEvents = (db: Db, deployId: number, afterId = 0) =>
  db
    .select()
    .from(deployEvents)
    .where(and(eq(deployEvents.deployId, deployId), gt(deployEvents.id, afterId)))
    .orderBy(asc(deployEvents.id))
    .all();

export function addAppEvent(db: Db, appId: number, step: string, message: string, level: EventLevel = 'info') {
  return db.insert(appEvents).values({ appId, timestamp: nowIso(), level, step, message }).returning().get();
}

export const listAppEvents = (db: Db, appId: number) =>
  db.select().from(appEvents).where(eq(appEvents.appId, appId)).orderBy(asc(appEvents.id)).all();

