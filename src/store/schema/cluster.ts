import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { updatedAt } from './common.js';

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

/**
 * A change a user asked of a Swarm node (PUT /api/nodes/{id}: availability, labels), desired state written
 * by the node command and applied by the node reconciler (`node:<ref>`). One row per node as the request
 * named it (id or host name), holding the latest request only: what it did not give stays null, so applying
 * it never re-sends an older request's field. Each request bumps `generation`.
 */
export const nodeSpecs = sqliteTable('node_specs', {
  nodeRef: text('node_ref').primaryKey(),
  availability: text('availability', { enum: ['active', 'pause', 'drain'] }),
  labels: text('labels', { mode: 'json' }).$type<Record<string, string>>(),
  generation: integer('generation').notNull().default(1),
  updatedAt: updatedAt(),
});

/** What the node reconciler did with a node's change: the generation it is about and, if refused, why. */
export const nodeSpecStatus = sqliteTable('node_spec_status', {
  nodeRef: text('node_ref')
    .primaryKey()
    .references(() => nodeSpecs.nodeRef, { onDelete: 'cascade' }),
  generation: integer('generation').notNull(),
  /** API.md code of a refusal (not_a_swarm, not_found, conflict, engine_error); null when applied. */
  code: text('code'),
  error: text('error'),
  updatedAt: updatedAt(),
});

export type NodeSpecRow = typeof nodeSpecs.$inferSelect;
export type NodeSpecStatusRow = typeof nodeSpecStatus.$inferSelect;
