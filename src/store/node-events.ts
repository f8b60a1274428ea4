// Row queries of node events (src/store/schema/cluster.ts). No rules here: src/cluster/node-events.ts
// decides what is an event.
import { desc, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { nodeEvents } from './schema/index.js';

export type NodeEventRow = typeof nodeEvents.$inferSelect;

/** Newest first. */
export const listNodeEvents = (db: Db, limit: number): NodeEventRow[] => db.select().from(nodeEvents).orderBy(desc(nodeEvents.id)).limit(limit).all();

/** The newest event of every node that has one. */
export function lastNodeEvents(db: Db): Map<string, NodeEventRow> {
  const rows = db
    .select()
    .from(nodeEvents)
    .where(sql`${nodeEvents.id} IN (SELECT MAX(${nodeEvents.id}) FROM ${nodeEvents} GROUP BY ${nodeEvents.nodeId})`)
    .all();
  return new Map(rows.map((r) => [r.nodeId, r]));
}

export const insertNodeEvent = (db: Db, row: Omit<NodeEventRow, 'id'>): void => {
  db.insert(nodeEvents).values(row).run();
};
