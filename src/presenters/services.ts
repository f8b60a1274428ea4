// The JSON shape of a managed service record: no credentials, ever.
import type { Db } from '../store/db.js';
import type { ServiceView } from '../store/service-view.js';
import { UPGRADE_STATUSES, UPGRADE_STEPS, type ServiceEventRow, type ServiceUpgradeRow } from '../store/schema/index.js';
import { linkedAppNames } from '../store/services.js';
import { z } from 'zod';
import { servicePolicyJson } from './service-backups.js';

export const serviceJsonSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(['postgres', 'mysql', 'redis', 'garage']),
    /** The version that serves (after an upgrade's switch, the new one). */
    version: z.string(),
    image_ref: z.string(),
    status: z.enum(['pending', 'provisioning', 'active', 'error', 'stopped']),
    container_name: z.string(),
    internal_port: z.number().int(),
    data_dir: z.string(),
    error: z.string().nullable(),
    linked_apps: z.array(z.object({ id: z.number().int(), name: z.string() })),
    /** Its own backup schedule and retention (docs/api.md "Per-service backups and restores"). */
    backup: z.object({ interval_minutes: z.number().int(), retain: z.number().int() }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Service' });

/** The API shape of a service record: no credentials, ever. */
export function serviceJson(db: Db, row: ServiceView) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    /** The version that serves (after an upgrade's switch, the new one). */
    version: row.version,
    image_ref: row.imageRef,
    status: row.status,
    container_name: row.containerName,
    internal_port: row.internalPort,
    data_dir: row.dataDir,
    error: row.error,
    linked_apps: linkedAppNames(db, row.id),
    backup: servicePolicyJson(db, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export const upgradeJsonSchema = z
  .object({
    id: z.number().int(),
    service_id: z.number().int(),
    from_version: z.string(),
    to_version: z.string(),
    from_image: z.string(),
    to_image: z.string(),
    status: z.enum(UPGRADE_STATUSES),
    step: z.enum(UPGRADE_STEPS),
    request: z.enum(['revert', 'confirm']).nullable().describe('What the user asked of a switched upgrade, until done'),
    backup_path: z.string().nullable(),
    verification: z
      .object({ databases: z.number().int(), tables: z.number().int(), differences: z.array(z.object({ table: z.string(), old: z.string(), new: z.string() })) })
      .nullable()
      .describe('The old and new versions side by side (row counts per table), once verified'),
    error: z.string().nullable(),
    keep_days: z.number().int(),
    switched_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'ServiceUpgrade' });

export const serviceEventJsonSchema = z
  .object({ id: z.number().int(), upgrade_id: z.number().int().nullable(), kind: z.string(), message: z.string(), created_at: z.string() })
  .meta({ id: 'ServiceEvent' });

/** The connection fields of a service, by type (catalog/*.ts credentialFields): host, port, password, ... */
export const serviceCredentialsJsonSchema = z
  .record(z.string(), z.union([z.string(), z.number()]))
  .describe('postgres and mysql: host, port, database, user, password; redis: host, port, password; garage: endpoint, region, access_key, secret_key, bucket')
  .meta({ id: 'ServiceCredentials' });

/** The API shape of an upgrade record. */
export function upgradeJson(u: ServiceUpgradeRow) {
  return {
    id: u.id,
    service_id: u.serviceId,
    from_version: u.fromVersion,
    to_version: u.toVersion,
    from_image: u.fromImage,
    to_image: u.toImage,
    status: u.status,
    step: u.step,
    request: u.request,
    backup_path: u.backupPath,
    verification: u.verification ? (JSON.parse(u.verification) as unknown) : null,
    error: u.error,
    keep_days: u.keepDays,
    switched_at: u.switchedAt,
    finished_at: u.finishedAt,
    created_at: u.createdAt,
  };
}

export const serviceEventJson = (e: ServiceEventRow) => ({ id: e.id, upgrade_id: e.upgradeId, kind: e.kind, message: e.message, created_at: e.createdAt });
