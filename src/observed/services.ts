// The one writer of what svc observed or decided about a managed service (service_status): status, error,
// container id, the image it resolved, heal counters, first activation, Garage provisioning. Only the service
// reconciler calls it; commands write the spec (services) and never this. A call writes only the values that
// differ from the row (DESIGN.md rule 7), so a steady pass costs a read and no write. The row is created on
// the first write; a service deleted meanwhile is skipped.
import { eq } from 'drizzle-orm';
import type { Db } from '../store/db.js';
import { nowIso, services, serviceStatus } from '../store/schema/index.js';
import { NO_SERVICE_STATUS, type ServiceObserved } from '../store/service-view.js';

export type ServicePatch = Partial<ServiceObserved>;

/** The observed facts of one service (the defaults when none were recorded yet). */
export function readServiceObserved(db: Db, serviceId: number): ServiceObserved {
  const row = db.select().from(serviceStatus).where(eq(serviceStatus.serviceId, serviceId)).get();
  if (!row) return { ...NO_SERVICE_STATUS };
  const { serviceId: _s, updatedAt: _u, ...facts } = row;
  return facts;
}

/** The keys of `patch` whose value differs from `current` (undefined means "leave it"). */
export function changedServiceFacts(current: ServiceObserved, patch: ServicePatch): ServicePatch {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v !== undefined && current[k as keyof ServiceObserved] !== v) out[k] = v;
  }
  return out as ServicePatch;
}

/**
 * Records `patch` where it differs and returns what was written (empty: nothing). `onWrite` runs inside the
 * same transaction with the facts before the write, for what must change with them (a status notice).
 */
export function observeService(db: Db, serviceId: number, patch: ServicePatch, onWrite?: (before: ServiceObserved, diff: ServicePatch) => void): ServicePatch {
  return db.transaction(() => {
    const row = db.select().from(serviceStatus).where(eq(serviceStatus.serviceId, serviceId)).get();
    const before: ServiceObserved = row ? (({ serviceId: _s, updatedAt: _u, ...f }) => f)(row) : { ...NO_SERVICE_STATUS };
    const diff = changedServiceFacts(before, patch);
    if (Object.keys(diff).length === 0) return {};
    if (row) {
      db.update(serviceStatus).set({ ...diff, updatedAt: nowIso() }).where(eq(serviceStatus.serviceId, serviceId)).run();
    } else {
      if (!db.select({ id: services.id }).from(services).where(eq(services.id, serviceId)).get()) return {}; // deleted meanwhile
      db.insert(serviceStatus).values({ serviceId, ...diff }).run();
    }
    onWrite?.(before, diff);
    return diff;
  });
}
