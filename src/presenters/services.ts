// The JSON shape of a managed service record: no credentials, ever.
import type { Db } from '../store/db.js';
import type { ServiceView } from '../store/service-view.js';
import { linkedAppNames } from '../store/services.js';
import { z } from 'zod';

export const serviceJsonSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(['postgres', 'mysql', 'redis', 'garage']),
    image_ref: z.string(),
    status: z.enum(['pending', 'provisioning', 'active', 'error', 'stopped']),
    container_name: z.string(),
    internal_port: z.number().int(),
    data_dir: z.string(),
    error: z.string().nullable(),
    linked_apps: z.array(z.object({ id: z.number().int(), name: z.string() })),
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
    image_ref: row.imageRef,
    status: row.status,
    container_name: row.containerName,
    internal_port: row.internalPort,
    data_dir: row.dataDir,
    error: row.error,
    linked_apps: linkedAppNames(db, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
