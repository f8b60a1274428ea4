import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';
import { services } from './services.js';

export const COPY_STATUSES = ['pending', 'copying', 'done', 'failed'] as const;
export type CopyStatus = (typeof COPY_STATUSES)[number];

/**
 * A preview's service made as a copy of its parent's data (issue 33 section 4, `previews.services: copy`):
 * asked for by the previews command when it creates the preview's service, carried out once by the service
 * reconciler as soon as that service is ready (a dump of the parent loaded into it), and gone with it.
 */
export const serviceCopies = sqliteTable(
  'service_copies',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    serviceId: integer('service_id')
      .notNull()
      .references(() => services.id, { onDelete: 'cascade' }),
    sourceId: integer('source_id').references(() => services.id, { onDelete: 'set null' }),
    status: text('status').$type<CopyStatus>().notNull().default('pending'),
    /** A dump larger than this is not loaded (the preview keeps an empty service and says why). */
    maxBytes: integer('max_bytes').notNull(),
    /** Bytes of the dump that was loaded. */
    bytes: integer('bytes'),
    error: text('error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('service_copies_service_idx').on(t.serviceId)],
);

export type ServiceCopyRow = typeof serviceCopies.$inferSelect;
