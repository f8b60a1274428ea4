// The certificate watcher's observed fact about apps: why Caddy cannot get the certificate of an app's
// domain (`cert_error`, API `certificate_error`), null once one is obtained. Written only where it
// differs (DESIGN.md rule 7).
import { isNotNull } from 'drizzle-orm';
import type { Db } from '../store/db.js';
import { apps, appStatus } from '../store/schema/index.js';
import { eq } from 'drizzle-orm';
import { observeApp } from './apps.js';

export interface DomainApp {
  id: number;
  name: string;
}

/** The app serving `domain` (domains are unique among apps), if any. */
export function appOfDomain(db: Db, domain: string): DomainApp | undefined {
  return db.select({ id: apps.id, name: apps.name }).from(apps).where(eq(apps.domain, domain)).get();
}

export function observeCertError(db: Db, appId: number, error: string | null): boolean {
  return observeApp(db, appId, { certError: error });
}

/** Apps with a certificate error recorded, and their domain now (a changed domain clears it). */
export function appsWithCertError(db: Db): { id: number; domain: string | null }[] {
  return db.select({ id: apps.id, domain: apps.domain }).from(apps).innerJoin(appStatus, eq(appStatus.appId, apps.id)).where(isNotNull(appStatus.certError)).all();
}
