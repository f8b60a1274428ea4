import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';
import { services } from './services.js';
import { updatedAt } from './common.js';

/**
 * What svc observed or decided about a managed service, 1:1 with `services` (gone with it), written by the
 * service reconciler only, through src/observed/services.ts, and only when a value differs (DESIGN.md
 * rule 7). Commands write the spec (`services`) and never this. A missing row reads as a service not looked
 * at yet (status `pending`, no container, no counters).
 */
export const serviceStatus = sqliteTable('service_status', {
  serviceId: integer('service_id')
    .primaryKey()
    .references(() => services.id, { onDelete: 'cascade' }),
  status: text('status', { enum: ['pending', 'provisioning', 'active', 'error', 'stopped'] }).notNull().default('pending'),
  /** The engine's (or provisioning's) last error, secrets redacted; null once the service is active. */
  error: text('error'),
  /** The engine's id of the container last created. */
  containerId: text('container_id'),
  /**
   * The image the container is created from: the spec's `image_ref` or, for a service that never became
   * active, the `SVC_IMAGE_<TYPE>` configured at its last attempt (API `image_ref` shows this once set).
   */
  imageRef: text('image_ref'),
  /** Self-healing: consecutive failed starts and the time before which no start is tried. */
  healFailures: integer('heal_failures').notNull().default(0),
  healNotBefore: text('heal_not_before'),
  /**
   * The `services.start_requested_at` the heal counters were last reset for: a newer request (a start from
   * the user) forgets the backoff of earlier failures.
   */
  startSeenAt: text('start_seen_at'),
  /**
   * When it first became `active`. Until then its image is not settled: a service that never ran takes the
   * configured `SVC_IMAGE_<TYPE>` at its next attempt; once active, a data directory exists that only its
   * image is known to read, so the image stays.
   */
  activatedAt: text('activated_at'),
  /** Garage: when its layout, bucket and the command's key were set up through the admin API. */
  provisionedAt: text('provisioned_at'),
  /**
   * Set by the switch of a guarded upgrade (issue 33): the version, container and data directory that serve
   * now, in place of the spec's creation-time ones (null: the spec's). A revert sets them back.
   */
  liveVersion: text('live_version'),
  liveContainer: text('live_container'),
  liveDataDir: text('live_data_dir'),
  updatedAt: updatedAt(),
});

export type ServiceStatusRow = typeof serviceStatus.$inferSelect;
