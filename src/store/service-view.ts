// A managed service as readers see it: the spec row (services) joined with what svc observed
// (service_status). Commands write the first, the service reconciler the second
// (src/observed/services.ts); nobody writes this view. It keeps the field names the service row had
// before the two were apart, so presenters (API JSON, UI, backups, manifests) read it unchanged.
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { LEGACY_VERSIONS } from '../catalog/types.js';
import { services, serviceStatus, type ServiceRow, type ServiceStatusRow } from './schema/index.js';

/** The observed facts of a service under the names readers use. */
export type ServiceObserved = Omit<ServiceStatusRow, 'serviceId' | 'updatedAt'>;

/** The facts of a service with no service_status row yet (the columns' defaults). */
export const NO_SERVICE_STATUS: ServiceObserved = {
  status: 'pending',
  error: null,
  containerId: null,
  imageRef: null,
  healFailures: 0,
  healNotBefore: null,
  startSeenAt: null,
  activatedAt: null,
  provisionedAt: null,
  liveVersion: null,
  liveContainer: null,
  liveDataDir: null,
};

/**
 * Spec and observed facts in one record. `imageRef` is the image that runs (the observed one, else the
 * spec's); `specImageRef` the one chosen at creation; `updatedAt` the later of the two rows' times.
 * `version`, `containerName` and `dataDir` are the live ones: after a guarded upgrade's switch those of the
 * new container (service_status.live_*), else the spec's; `spec*` keep the creation-time values.
 */
export type ServiceView = Omit<ServiceRow, 'version'> &
  Omit<ServiceObserved, 'imageRef'> & { version: string; specImageRef: string; specVersion: string; specContainerName: string; specDataDir: string };

export function toServiceView(row: ServiceRow, s: ServiceStatusRow | null | undefined): ServiceView {
  const { serviceId: _id, updatedAt: observedAt, imageRef, ...facts } = s ?? { ...NO_SERVICE_STATUS, serviceId: row.id, updatedAt: row.updatedAt };
  const specVersion = row.version ?? LEGACY_VERSIONS[row.type];
  return {
    ...row,
    ...facts,
    version: facts.liveVersion ?? specVersion,
    containerName: facts.liveContainer ?? row.containerName,
    dataDir: facts.liveDataDir ?? row.dataDir,
    specVersion,
    specContainerName: row.containerName,
    specDataDir: row.dataDir,
    specImageRef: row.imageRef,
    imageRef: imageRef ?? row.imageRef,
    updatedAt: observedAt > row.updatedAt ? observedAt : row.updatedAt,
  };
}

/** The columns of a services row left-joined with its status, for `select(...)`. */
export const serviceViewColumns = { row: services, status: serviceStatus } as const;

/** A select of services joined with their status; add where/order and map rows through `viewOf`. */
export const selectServiceViews = (db: Db) =>
  db.select(serviceViewColumns).from(services).leftJoin(serviceStatus, eq(serviceStatus.serviceId, services.id));

export const viewOf = (r: { row: ServiceRow; status: ServiceStatusRow | null }): ServiceView => toServiceView(r.row, r.status);
