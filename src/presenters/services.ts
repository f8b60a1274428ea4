// The JSON shape of a managed service record: no credentials, ever.
import type { Db } from '../store/db.js';
import type { ServiceView } from '../store/service-view.js';
import { linkedAppNames } from '../store/services.js';

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
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
