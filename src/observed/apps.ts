// The one writer of what svc observed or decided about an app (app_status): the live deploy, its
// container, address, port and image, heal counters, status. Only the app reconciler calls it; commands
// write the spec (apps) and never this. Each call writes only the values that differ from the row
// (DESIGN.md rule 7), so a steady pass costs a read and no write, and a change of one fact never
// rewrites another. The row is created on the first write; an app deleted meanwhile is skipped.
import { eq } from 'drizzle-orm';
import type { Db } from '../store/db.js';
import { appStatus, apps, nowIso, type AppStatusRow } from '../store/schema/index.js';

export type AppObserved = Partial<Omit<AppStatusRow, 'appId' | 'updatedAt'>>;

/** What a missing row reads as (the columns' defaults). */
const EMPTY: Omit<AppStatusRow, 'appId' | 'updatedAt'> = {
  status: 'inactive',
  liveDeployId: null,
  liveImage: null,
  imageBasis: null,
  port: null,
  portBasis: null,
  liveContainerName: null,
  liveContainerId: null,
  liveAddress: null,
  healFailures: 0,
  healNotBefore: null,
};

/** The observed facts of one app (defaults when none were recorded yet). */
export function readObserved(db: Db, appId: number): Omit<AppStatusRow, 'appId' | 'updatedAt'> {
  const row = db.select().from(appStatus).where(eq(appStatus.appId, appId)).get();
  if (!row) return { ...EMPTY };
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
    const current = db.select().from(appStatus).where(eq(appStatus.appId, appId)).get();
    const diff = changedFacts(current ?? { ...EMPTY }, patch);
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
