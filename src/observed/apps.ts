// The one writer of what svc observed or decided about an app (app_status): the live deploy, its
// container, address, port and image, heal counters, status. Only the app reconciler calls it; commands
// write the spec (apps) and never this. Each call writes only the values that differ from the row
// (DESIGN.md rule 7), so a steady pass costs a read and no write, and a change of one fact never
// rewrites another. The row is created on the first write; an app deleted meanwhile is skipped.
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { NO_STATUS } from '../store/app-view.js';
import type { Db } from '../store/db.js';
import { perDb } from '../store/prepared.js';
import { appInstances, appStatus, apps, nowIso, type AppInstanceRow, type AppStatusRow } from '../store/schema/index.js';

export type AppObserved = Partial<Omit<AppStatusRow, 'appId' | 'updatedAt'>>;

/** The observed facts of one app (defaults when none were recorded yet). */
// Read on every pass of every app: built once (store/prepared.ts).
const statusOf = perDb((db) => db.select().from(appStatus).where(eq(appStatus.appId, sql.placeholder('appId'))).prepare());
const instancesOf = perDb((db) => db.select().from(appInstances).where(eq(appInstances.appId, sql.placeholder('appId'))).orderBy(asc(appInstances.slot)).prepare());

export function readObserved(db: Db, appId: number): Omit<AppStatusRow, 'appId' | 'updatedAt'> {
  const row = statusOf(db).get({ appId });
  if (!row) return { ...NO_STATUS };
  const { appId: _a, updatedAt: _u, ...facts } = row;
  return facts;
}

/** The keys of `patch` whose value differs from `current`. */
export function changedFacts(current: Omit<AppStatusRow, 'appId' | 'updatedAt'>, patch: AppObserved): AppObserved {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v !== undefined && current[k as keyof typeof current] !== v) out[k] = v;
  }
  return out as AppObserved;
}

/** Records `patch` where it differs; returns true when something was written. */
export function observeApp(db: Db, appId: number, patch: AppObserved): boolean {
  return db.transaction(() => {
    const current = statusOf(db).get({ appId });
    const diff = changedFacts(current ?? { ...NO_STATUS }, patch);
    if (Object.keys(diff).length === 0) return false;
    if (current) {
      db.update(appStatus).set({ ...diff, updatedAt: nowIso() }).where(eq(appStatus.appId, appId)).run();
      return true;
    }
    if (!db.select({ id: apps.id }).from(apps).where(eq(apps.id, appId)).get()) return false; // deleted meanwhile
    db.insert(appStatus).values({ appId, ...diff }).run();
    return true;
  });
}

/** The live instance of an app: the container that serves and where it is. */
export interface LiveInstance {
  containerName: string | null;
  containerId: string | null;
  address: string | null;
}

/** Records the live container (replicas will key this by instance slot; callers already pass one instance). */
export const observeLive = (db: Db, appId: number, live: Partial<LiveInstance>, more: AppObserved = {}): boolean =>
  observeApp(db, appId, { liveContainerName: live.containerName, liveContainerId: live.containerId, liveAddress: live.address, ...more });

/** What the reconciler records of one replica beyond the first (slot >= 1). */
export type InstanceObserved = Partial<Omit<AppInstanceRow, 'appId' | 'slot' | 'updatedAt'>>;

/** The recorded replicas of an app beyond the first, by slot. */
export function readInstances(db: Db, appId: number): AppInstanceRow[] {
  return instancesOf(db).all({ appId });
}

/**
 * Records replica `slot` (>= 1) where it differs; a new slot needs `deployId` and `containerName`. Returns
 * true when something was written. An app deleted meanwhile is skipped.
 */
export function observeInstance(db: Db, appId: number, slot: number, patch: InstanceObserved): boolean {
  return db.transaction(() => {
    const where = and(eq(appInstances.appId, appId), eq(appInstances.slot, slot));
    const current = db.select().from(appInstances).where(where).get();
    if (current) {
      const diff = Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && current[k as keyof AppInstanceRow] !== v));
      if (Object.keys(diff).length === 0) return false;
      db.update(appInstances).set({ ...diff, updatedAt: nowIso() }).where(where).run();
      return true;
    }
    if (patch.deployId == null || !patch.containerName) throw new Error(`replica ${slot} of app ${appId} needs a deploy and a container name`);
    if (!db.select({ id: apps.id }).from(apps).where(eq(apps.id, appId)).get()) return false;
    db.insert(appInstances).values({ ...patch, appId, slot, deployId: patch.deployId, containerName: patch.containerName }).run();
    return true;
  });
}

/** Forgets the replicas from slot `fromSlot` on (scale-down, stop, a switch to fewer); true if any went. */
export function dropInstances(db: Db, appId: number, fromSlot: number): boolean {
  return db.delete(appInstances).where(and(eq(appInstances.appId, appId), gte(appInstances.slot, fromSlot))).run().changes > 0;
}

/** Forgets one replica (removed after leaving the answer); true if it was recorded. */
export function dropInstance(db: Db, appId: number, slot: number): boolean {
  return db.delete(appInstances).where(and(eq(appInstances.appId, appId), eq(appInstances.slot, slot))).run().changes > 0;
}
