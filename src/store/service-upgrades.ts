// Guarded major upgrades of managed services (issue 33) and the events of a service: the persisted state
// machine the service reconciler advances one step per pass. Creating an upgrade and asking a switched one
// to be reverted or confirmed are the services command's (src/desired/service-upgrades.ts); the steps are
// the reconciler's. Nothing here decides anything: the rules are in the command and in upgrade-plan.ts.
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Db } from './db.js';
import { nowIso, serviceEvents, serviceUpgrades, type ServiceEventRow, type ServiceUpgradeRow, type UpgradeStatus, type UpgradeStep } from './schema/index.js';

export type NewUpgrade = Omit<typeof serviceUpgrades.$inferInsert, 'id' | 'status' | 'step' | 'createdAt' | 'updatedAt'>;

/** Upgrades that still hold something: running, or switched with the old one kept. */
export const OPEN_UPGRADE: UpgradeStatus[] = ['running', 'switched'];

export function insertUpgrade(db: Db, u: NewUpgrade): ServiceUpgradeRow {
  return db.insert(serviceUpgrades).values(u).returning().get();
}

/** The service's upgrade that is running or switched (at most one), if any. */
export function openUpgradeOf(db: Db, serviceId: number): ServiceUpgradeRow | undefined {
  return db
    .select()
    .from(serviceUpgrades)
    .where(and(eq(serviceUpgrades.serviceId, serviceId), inArray(serviceUpgrades.status, OPEN_UPGRADE)))
    .orderBy(desc(serviceUpgrades.id))
    .get();
}

export function upgradesOf(db: Db, serviceId: number): ServiceUpgradeRow[] {
  return db.select().from(serviceUpgrades).where(eq(serviceUpgrades.serviceId, serviceId)).orderBy(desc(serviceUpgrades.id)).all();
}

export function getUpgrade(db: Db, id: number): ServiceUpgradeRow | undefined {
  return db.select().from(serviceUpgrades).where(eq(serviceUpgrades.id, id)).get();
}

/** Writes a patch of an upgrade (its step, outcome, request) and stamps it. */
export function updateUpgrade(db: Db, id: number, patch: Partial<Omit<ServiceUpgradeRow, 'id' | 'serviceId' | 'createdAt'>>): void {
  db.update(serviceUpgrades).set({ ...patch, updatedAt: nowIso() }).where(eq(serviceUpgrades.id, id)).run();
}

/** Moves an upgrade to its next step (attempts start over) with the step's event, in one transaction. */
export function advanceUpgrade(db: Db, u: ServiceUpgradeRow, step: UpgradeStep, event: { kind: string; message: string }, patch: Partial<ServiceUpgradeRow> = {}): void {
  db.transaction(() => {
    updateUpgrade(db, u.id, { step, attempts: 0, ...patch });
    addServiceEvent(db, u.serviceId, event.kind, event.message, u.id);
  });
}

export function addServiceEvent(db: Db, serviceId: number, kind: string, message: string, upgradeId: number | null = null): void {
  db.insert(serviceEvents).values({ serviceId, kind, message, upgradeId }).run();
}

/** How many events of `kind` an upgrade has (how often its move was begun again after a crash). */
export function countUpgradeEvents(db: Db, upgradeId: number, kind: string): number {
  return db.select({ id: serviceEvents.id }).from(serviceEvents).where(and(eq(serviceEvents.upgradeId, upgradeId), eq(serviceEvents.kind, kind))).all().length;
}

export function serviceEventsOf(db: Db, serviceId: number, limit = 200): ServiceEventRow[] {
  return db.select().from(serviceEvents).where(eq(serviceEvents.serviceId, serviceId)).orderBy(desc(serviceEvents.id)).limit(limit).all();
}
