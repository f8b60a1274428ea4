import { sqliteTable, integer, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt, type Owner } from './common.js';
import { apps } from './apps.js';

export { SERVICE_TYPES, type ServiceType } from '../../catalog/types.js';
export const SERVICE_STATUSES = ['pending', 'provisioning', 'active', 'error', 'stopped'] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

/**
 * A managed backing service. `desiredRunning` is the desired state set by stop/start; `status` is what the
 * reconciler observed. Credentials are sealed JSON (AES-256-GCM).
 */
export const services = sqliteTable('services', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  type: text('type', { enum: ['postgres', 'mysql', 'redis', 'garage'] }).notNull(),
  imageRef: text('image_ref').notNull(),
  status: text('status', { enum: ['pending', 'provisioning', 'active', 'error', 'stopped'] }).notNull().default('pending'),
  desiredRunning: integer('desired_running', { mode: 'boolean' }).notNull().default(true),
  containerName: text('container_name').notNull(),
  containerId: text('container_id'),
  internalPort: integer('internal_port').notNull(),
  dataDir: text('data_dir').notNull(),
  credentialsSealed: text('credentials_sealed').notNull(),
  error: text('error'),
  healFailures: integer('heal_failures').notNull().default(0),
  healNotBefore: text('heal_not_before'),
  /**
   * When it first became `active` (written by the reconciler). Until then its image is not settled: a
   * service that never ran takes the configured `SVC_IMAGE_<TYPE>` at its next attempt; once active, a
   * data directory exists that only its image is known to read, so the image stays.
   */
  activatedAt: text('activated_at'),
  owner: text('owner').$type<Owner>().notNull().default('rest'),
  deletedAt: text('deleted_at'),
  purgeOnDelete: integer('purge_on_delete', { mode: 'boolean' }).notNull().default(false),
  /**
   * A pull-request preview's own empty instance (issue 20, `previews.services: "fresh"`): the preview app it
   * belongs to and the parent's service it stands in for. No foreign key on purpose: deleting the preview
   * app must not erase the only record that the service (and its data directory) is to be removed.
   */
  previewAppId: integer('preview_app_id'),
  previewSourceId: integer('preview_source_id'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const serviceLinks = sqliteTable(
  'service_links',
  {
    id: integer('id').primaryKey(),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    serviceId: integer('service_id').notNull().references(() => services.id, { onDelete: 'cascade' }),
    alias: text('alias'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('service_links_app_service_idx').on(t.appId, t.serviceId)],
);

export type ServiceRow = typeof services.$inferSelect;
export type ServiceLinkRow = typeof serviceLinks.$inferSelect;
