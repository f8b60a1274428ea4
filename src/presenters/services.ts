// The JSON shape of a managed service record: no credentials, ever.
import type { Db } from '../store/db.js';
import type { ServiceView } from '../store/service-view.js';
import type { ServiceEventRow, ServiceUpgradeRow } from '../store/schema/index.js';
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
