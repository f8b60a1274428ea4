import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';
import { apps } from './apps.js';
import { updatedAt } from './common.js';

/**
 * What svc observed or decided about an app, 1:1 with `apps` (gone with it), written by the app
 * reconciler (and `route_error` by the proxy reconciler) through src/observed/, and only when a value differs (DESIGN.md rule 7). A missing
 * row reads as "nothing live yet" (status inactive, no counters).
 *
 * The live container columns describe the one instance an app has today. Replicas (issue 19) move them,
 * with the heal counters, into a child table `app_instances (app_id, slot, ...)`; the app-level facts
 * (status, live deploy, image, port) stay here. observed/apps.ts already writes them per instance.
 */
export const appStatus = sqliteTable('app_status', {
  appId: integer('app_id')
    .primaryKey()
    .references(() => apps.id, { onDelete: 'cascade' }),
  status: text('status', { enum: ['active', 'inactive', 'error'] }).notNull().default('inactive'),
  /** The deploy whose container serves (API: `current_deploy_id`). */
  liveDeployId: integer('live_deploy_id'),
  /** The image of the live deploy. */
  liveImage: text('live_image'),
  /** `apps.image_ref` when `live_image` was recorded: a spec still equal to it has not changed since. */
  imageBasis: text('image_basis'),
  /** The port the live container listens on: a build provider's, else the spec's `internal_port`. */
  port: integer('port'),
  /** `apps.internal_port` when `port` was recorded. */
  portBasis: integer('port_basis'),
  liveContainerName: text('live_container_name'),
  liveContainerId: text('live_container_id'),
  liveAddress: text('live_address'),
  /** Self-healing: consecutive failed restarts and the time before which no restart is tried. */
  healFailures: integer('heal_failures').notNull().default(0),
  healNotBefore: text('heal_not_before'),
  /** A live container runs (the app reconciler's last look): `serving` in the API, whatever `status` says. */
  serving: integer('serving', { mode: 'boolean' }).notNull().default(false),
  /** With status `error`: the failed deploy's error (API `status_reason`); null otherwise. */
  statusReason: text('status_reason'),
  /** Why the proxy left the app's listener out (port taken on the host); written by the proxy reconciler. */
  routeError: text('route_error'),
  /** Why Caddy cannot get the certificate of the app's domain (its TLS log); null once one is obtained. */
  certError: text('cert_error'),
  updatedAt: updatedAt(),
});

export type AppStatusRow = typeof appStatus.$inferSelect;
