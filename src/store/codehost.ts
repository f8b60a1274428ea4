// Code-host records: delivery ids already handled (replay protection), installations seen through
// `installation` events, and the single-use states of the manifest flow (kept in `settings`).
import { and, eq, isNull, like } from 'drizzle-orm';
import type { Db } from './db.js';
import { codehostInstallations, settings, webhookDeliveries } from './schema/index.js';

/**
 * Records a delivery id; false when it was recorded before (a replay or a redelivery: do nothing twice).
 * Call inside the transaction that acts on the delivery, so a failed action leaves no record.
 */
export function recordDelivery(db: Db, deliveryId: string, event: string): boolean {
  const r = db.insert(webhookDeliveries).values({ deliveryId, event }).onConflictDoNothing().run();
  return r.changes === 1;
}

/** Stores what was done with a delivery (for diagnosis). */
export function setDeliveryResult(db: Db, deliveryId: string, result: string): void {
  db.update(webhookDeliveries).set({ result: result.slice(0, 500) }).where(eq(webhookDeliveries.deliveryId, deliveryId)).run();
}

/** An installation was created (or re-created after a delete). */
export function recordInstallation(db: Db, installationId: number, account: string | null): void {
  db.insert(codehostInstallations)
    .values({ installationId, account })
    .onConflictDoUpdate({ target: codehostInstallations.installationId, set: { account, deletedAt: null } })
    .run();
}

/** Marks an installation deleted; false when it was never seen (a 200 no-op for the webhook). */
export function deleteInstallation(db: Db, installationId: number, nowIso: string): boolean {
  const r = db
    .update(codehostInstallations)
    .set({ deletedAt: nowIso })
    .where(and(eq(codehostInstallations.installationId, installationId), isNull(codehostInstallations.deletedAt)))
    .run();
  return r.changes === 1;
}

export const listInstallations = (db: Db) =>
  db.select().from(codehostInstallations).where(isNull(codehostInstallations.deletedAt)).all();

const STATE_PREFIX = 'codehost_state:';

/** Stores a manifest-flow state that is valid until `expiresAt` for the user who started the flow. */
export function saveManifestState(db: Db, state: string, userId: number, expiresAt: Date, now: Date): void {
  // Expired states of abandoned flows are dropped as new ones are made.
  for (const row of db.select().from(settings).where(like(settings.key, `${STATE_PREFIX}%`)).all()) {
    const v = JSON.parse(row.value) as { expires_at: string };
    if (Date.parse(v.expires_at) <= now.getTime()) db.delete(settings).where(eq(settings.key, row.key)).run();
  }
  db.insert(settings)
    .values({ key: STATE_PREFIX + state, value: JSON.stringify({ user_id: userId, expires_at: expiresAt.toISOString() }), updatedAt: now.toISOString() })
    .run();
}

/**
 * Consumes a state of `userId`'s flow: deleted on use (single use). False (and nothing deleted) for an
 * unknown state or another user's; an expired one is deleted and refused.
 */
export function takeManifestState(db: Db, state: string, userId: number, now: Date): boolean {
  const key = STATE_PREFIX + state;
  const row = db.select().from(settings).where(eq(settings.key, key)).get();
  if (!row) return false;
  const v = JSON.parse(row.value) as { user_id: number; expires_at: string };
  if (v.user_id !== userId) return false;
  db.delete(settings).where(eq(settings.key, key)).run();
  return Date.parse(v.expires_at) > now.getTime();
}
