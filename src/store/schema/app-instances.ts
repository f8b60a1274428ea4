import { sqliteTable, integer, text, primaryKey } from 'drizzle-orm/sqlite-core';
import { apps } from './apps.js';
import { updatedAt } from './common.js';

/**
 * The live replicas of an app beyond its first (issue 19): one row per replica slot 1..replicas-1, written
 * only by the app reconciler through src/observed/instances.ts, and only when a value differs (rule 7).
 * Slot 0 is still the live container of `app_status` (its columns and heal counters), so every reader of
 * the single-instance columns keeps working; the DNS answer of an app holds slot 0's address and these.
 */
export const appInstances = sqliteTable(
  'app_instances',
  {
    appId: integer('app_id')
      .notNull()
      .references(() => apps.id, { onDelete: 'cascade' }),
    slot: integer('slot').notNull(),
    /** The deploy whose image this replica runs (the live one, or the old one while a deploy switches). */
    deployId: integer('deploy_id').notNull(),
    containerName: text('container_name').notNull(),
    containerId: text('container_id'),
    /** Its address on the instance network while it runs; null when stopped (out of the DNS answer). */
    address: text('address'),
    /** Self-healing of this replica alone: consecutive failed restarts and the backoff's end. */
    healFailures: integer('heal_failures').notNull().default(0),
    healNotBefore: text('heal_not_before'),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.slot] })],
);

export type AppInstanceRow = typeof appInstances.$inferSelect;
