// The copy of a parent's data a preview's service is made with (issue 33 section 4): asked for by the
// previews command with the service row, carried out by the service reconciler once the service is ready.
import { and, eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { nowIso, serviceCopies, type ServiceCopyRow } from './schema/index.js';

/** The largest dump a copy loads by default (2 GiB); a larger parent gives the preview an empty service. */
export const COPY_MAX_BYTES = 2 * 1024 ** 3;

export function askForCopy(db: Db, serviceId: number, sourceId: number, maxBytes = COPY_MAX_BYTES): void {
  db.insert(serviceCopies).values({ serviceId, sourceId, maxBytes }).run();
}

/** The copy still to be made (or begun and never finished) for this service. */
export const openCopyOf = (db: Db, serviceId: number): ServiceCopyRow | undefined =>
  db.select().from(serviceCopies).where(and(eq(serviceCopies.serviceId, serviceId))).all().find((c) => c.status === 'pending' || c.status === 'copying');

export const copiesOf = (db: Db, serviceId: number): ServiceCopyRow[] => db.select().from(serviceCopies).where(eq(serviceCopies.serviceId, serviceId)).all();

export function updateCopy(db: Db, id: number, patch: Partial<Pick<ServiceCopyRow, 'status' | 'bytes' | 'error'>>): void {
  db.update(serviceCopies).set({ ...patch, updatedAt: nowIso() }).where(eq(serviceCopies.id, id)).run();
}
