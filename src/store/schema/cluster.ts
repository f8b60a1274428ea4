import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';

/**
 * A Swarm node that went down or came back (issue 19 "A node that goes down is an event"). Swarm holds the
 * nodes themselves; this is the history svc observed, written by src/cluster/node-events.ts only.
 */
export const nodeEvents = sqliteTable(
  'node_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    nodeId: text('node_id').notNull(),
    hostname: text('hostname').notNull(),
    kind: text('kind', { enum: ['down', 'up'] }).notNull(),
    /** Swarm's state when seen (`down`, `disconnected`, `ready`). */
    state: text('state').notNull(),
    timestamp: text('timestamp').notNull(),
  },
  (t) => [index('node_events_node_idx').on(t.nodeId, t.id)],
);
