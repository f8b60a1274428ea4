import { sqliteTable, integer, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt, type Owner } from './common.js';
import { apps } from './apps.js';

export { SERVICE_TYPES, type ServiceType } from '../../catalog/types.js';
export const SERVICE_STATUSES = ['pending', 'provisioning', 'active', 'error', 'stopped'] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

/**
 * A managed backing service as the user asked for it (its spec), written by the services command only
 * (src/desired/services.ts). `desiredRunning` is set by stop/start. Credentials are sealed JSON (AES-256-GCM),
 * generated once at creation, Garage's access key included. What the reconciler observed (status, error,
 * container, the image it resolved, heal counters) lives beside it in `service_status`.
 */
export const services = sqliteTable('services', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  type: text('type', { enum: ['postgres', 'mysql', 'redis', 'garage'] }).notNull(),
  /**
   * The version chosen at creation (issue 33; null on rows older than versions: catalog LEGACY_VERSIONS).
   * After a guarded upgrade the live one is service_status.live_version.
   */
  version: text('version'),
  /** The image chosen at creation (`SVC_IMAGE_<TYPE>` then); service_status.image_ref is the one that runs. */
  imageRef: text('image_ref').notNull(),
  desiredRunning: integer('desired_running', { mode: 'boolean' }).notNull().default(true),
  containerName: text('container_name').notNull(),
  internalPort: integer('internal_port').notNull(),
  dataDir: text('data_dir').notNull(),
  credentialsSealed: text('credentials_sealed').notNull(),
  /** The last start the user asked for (POST .../start): the reconciler then forgets earlier failures' backoff. */
  startRequestedAt: text('start_requested_at'),
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
