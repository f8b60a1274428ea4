// Row queries of notifications: channels, the outbox, the delivery log, alert states. No rules here
// (src/desired/notify.ts validates channels; src/notify/ decides what to send and when).
import { and, asc, desc, eq, lte, min } from 'drizzle-orm';
import { notFound } from '../errors.js';
import type { Db } from './db.js';
import { notifyAlerts, notifyChannels, notifyDeliveries, notifyOutbox } from './schema/index.js';

export type ChannelRow = typeof notifyChannels.$inferSelect;
export type OutboxRow = typeof notifyOutbox.$inferSelect;
export type DeliveryRow = typeof notifyDeliveries.$inferSelect;

export const listChannels = (db: Db): ChannelRow[] => db.select().from(notifyChannels).orderBy(asc(notifyChannels.name)).all();

export function getChannel(db: Db, id: number): ChannelRow {
  const row = db.select().from(notifyChannels).where(eq(notifyChannels.id, id)).get();
  if (!row) throw notFound('channel');
  return row;
}

export const channelByName = (db: Db, name: string) => db.select().from(notifyChannels).where(eq(notifyChannels.name, name)).get();

/** Pending rows whose time has come, oldest first. */
export const dueOutbox = (db: Db, nowIso: string, limit: number): OutboxRow[] =>
  db
    .select()
    .from(notifyOutbox)
    .where(and(eq(notifyOutbox.status, 'pending'), lte(notifyOutbox.nextAt, nowIso)))
    .orderBy(asc(notifyOutbox.nextAt), asc(notifyOutbox.id))
    .limit(limit)
    .all();

/** When the first pending row comes due (ISO), or undefined when none is pending. */
export const nextOutboxDue = (db: Db): string | undefined =>
  db.select({ at: min(notifyOutbox.nextAt) }).from(notifyOutbox).where(eq(notifyOutbox.status, 'pending')).get()?.at ?? undefined;

export const getOutbox = (db: Db, id: number) => db.select().from(notifyOutbox).where(eq(notifyOutbox.id, id)).get();

export function updateOutbox(db: Db, id: number, patch: Partial<OutboxRow>): void {
  db.update(notifyOutbox).set(patch).where(eq(notifyOutbox.id, id)).run();
}

export function addDelivery(db: Db, row: typeof notifyDeliveries.$inferInsert): void {
  db.insert(notifyDeliveries).values(row).run();
}

/** The delivery log, newest first, optionally of one channel. */
export function listDeliveries(db: Db, opts: { channelId?: number; limit?: number } = {}) {
  const rows = db
    .select({ d: notifyDeliveries, channel: notifyChannels.name })
    .from(notifyDeliveries)
    .innerJoin(notifyChannels, eq(notifyChannels.id, notifyDeliveries.channelId))
    .where(opts.channelId ? eq(notifyDeliveries.channelId, opts.channelId) : undefined)
    .orderBy(desc(notifyDeliveries.id))
    .limit(opts.limit ?? 100)
    .all();
  return rows;
}

/** The outbox, newest first (pending, delivered, failed messages). */
export function listOutbox(db: Db, limit = 100) {
  return db
    .select()
    .from(notifyOutbox)
    .orderBy(desc(notifyOutbox.id))
    .limit(limit)
    .all();
}

export const getAlert = (db: Db, key: string) => db.select().from(notifyAlerts).where(eq(notifyAlerts.key, key)).get();

export function putAlert(db: Db, key: string, open: boolean, lastSentAt: string | null, now: string): void {
  db.insert(notifyAlerts)
    .values({ key, open, lastSentAt, updatedAt: now })
    .onConflictDoUpdate({ target: notifyAlerts.key, set: { open, lastSentAt, updatedAt: now } })
    .run();
}
