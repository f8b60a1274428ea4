// The proxy reconciler's one observed fact about apps: why an app's listener is left out of the proxy
// (`route_error`, null when its route is loaded). Written only where it differs (DESIGN.md rule 7).
import { eq } from 'drizzle-orm';
import type { Db } from '../store/db.js';
import { apps, appStatus } from '../store/schema/index.js';
import { observeApp } from './apps.js';

/** Sets every app's route error: `errors` by app name, null for the rest. Returns the apps written. */
export function observeRouteErrors(db: Db, errors: ReadonlyMap<string, string>): string[] {
  const rows = db.select({ id: apps.id, name: apps.name, routeError: appStatus.routeError }).from(apps).leftJoin(appStatus, eq(appStatus.appId, apps.id)).all();
  const written: string[] = [];
  for (const r of rows) {
    const want = errors.get(r.name) ?? null;
    if ((r.routeError ?? null) !== want && observeApp(db, r.id, { routeError: want })) written.push(r.name);
  }
  return written;
}
