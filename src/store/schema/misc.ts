import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';
import { createdAt } from './common.js';

/** Full-state backup archives (SPEC.md 2.7). */
export const backups = sqliteTable('backups', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  filename: text('filename').notNull().unique(),
  sizeBytes: integer('size_bytes').notNull().default(0),
  type: text('type').notNull().default('full'),
  status: text('status', { enum: ['running', 'completed', 'failed'] }).notNull().default('completed'),
  /** What asked for it: the API/CLI, the schedule, a restore's safety backup, or an imported archive. */
  trigger: text('trigger', { enum: ['manual', 'scheduled', 'safety', 'import'] }).notNull().default('manual'),
  error: text('error'),
  createdAt: createdAt(),
});

/** Delivery ids already handled, so a redelivered webhook does nothing twice. */
export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  id: integer('id').primaryKey(),
  deliveryId: text('delivery_id').notNull().unique(),
  event: text('event').notNull(),
  result: text('result'),
  receivedAt: createdAt(),
});

/** Code-host app installations seen through `installation` events. */
export const codehostInstallations = sqliteTable('codehost_installations', {
  id: integer('id').primaryKey(),
  installationId: integer('installation_id').notNull().unique(),
  account: text('account'),
  createdAt: createdAt(),
  deletedAt: text('deleted_at'),
});

/** Small key/value settings (encryption check value, manifest-flow state, ...). */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** The last apply of each manifest source (API.md "Manifests"). */
export const manifestApplies = sqliteTable('manifest_applies', {
  id: integer('id').primaryKey(),
  source: text('source', { enum: ['dir', 'git', 'api'] }).notNull().unique(),
  location: text('location').notNull(),
  revision: text('revision'),
  appliedAt: text('applied_at').notNull(),
  resources: text('resources', { mode: 'json' }).$type<{ kind: string; name: string }[]>().notNull(),
  errors: text('errors', { mode: 'json' }).$type<unknown[]>().notNull(),
});
