// Row queries of pull-request previews (src/store/schema/previews.ts). No rules: src/desired/previews.ts.
import { and, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { perDb } from './prepared.js';
import { apps, nowIso, previews, serviceLinks, services, type PreviewRow, type ServiceRow } from './schema/index.js';

export function getPreview(db: Db, parentId: number, prNumber: number): PreviewRow | undefined {
  return db.select().from(previews).where(and(eq(previews.parentId, parentId), eq(previews.prNumber, prNumber))).get();
}

// Asked on every deploy event (the preview reporter): built once (prepared.ts).
const byApp = perDb((db) => db.select().from(previews).where(eq(previews.appId, sql.placeholder('appId'))).prepare());
export function getPreviewByApp(db: Db, appId: number): PreviewRow | undefined {
  return byApp(db).get({ appId });
}

export function getPreviewById(db: Db, id: number): PreviewRow | undefined {
  return db.select().from(previews).where(eq(previews.id, id)).get();
}

/** What svc last said on the pull request (src/previews/reporter.ts). */
export function setPreviewReport(db: Db, id: number, patch: { commentId?: string | null; reported?: string | null }): void {
  db.update(previews).set(patch).where(eq(previews.id, id)).run();
}

export function previewsOf(db: Db, parentId: number): PreviewRow[] {
  return db.select().from(previews).where(eq(previews.parentId, parentId)).all();
}

export function allPreviews(db: Db): PreviewRow[] {
  return db.select().from(previews).all();
}

/** Previews with their app's name, for listings (`GET /api/apps/{id}/previews`). */
export function previewsWithApps(db: Db, parentId: number) {
  return db
    .select({ preview: previews, name: apps.name, domain: apps.domain, fallbackPort: apps.fallbackPort, accessMode: apps.accessMode })
    .from(previews)
    .innerJoin(apps, eq(apps.id, previews.appId))
    .where(eq(previews.parentId, parentId))
    .all();
}

/**
 * The preview apps of `parentId` deleted (their preview rows go by cascade) and their fresh services
 * marked for removal; returns the names to announce.
 */
export function deletePreviewApps(db: Db, parentId: number): { apps: string[]; services: string[]; removed: { row: PreviewRow; name: string }[] } {
  const rows = db.select({ preview: previews, id: apps.id, name: apps.name }).from(previews).innerJoin(apps, eq(apps.id, previews.appId)).where(eq(previews.parentId, parentId)).all();
  const released = releasePreviewServices(db, rows.map((r) => r.id));
  for (const r of rows) db.delete(apps).where(eq(apps.id, r.id)).run();
  return { apps: rows.map((r) => r.name), services: released, removed: rows.map((r) => ({ row: r.preview, name: r.name })) };
}

/** The live fresh services of preview app `appId` (`previews.services: "fresh"`). */
export function previewServicesOf(db: Db, appId: number): ServiceRow[] {
  return db.select().from(services).where(and(eq(services.previewAppId, appId), isNull(services.deletedAt))).all();
}

/**
 * Marks the fresh services of these preview apps deleted with their data (the service reconciler removes
 * container, data directory and row) and drops their links; returns their names to enqueue.
 */
export function releasePreviewServices(db: Db, appIds: number[]): string[] {
  if (appIds.length === 0) return [];
  const rows = db.select().from(services).where(and(inArray(services.previewAppId, appIds), isNull(services.deletedAt))).all();
  for (const row of rows) releaseService(db, row.id);
  return rows.map((r) => r.name);
}

/** One service marked deleted with its data, unlinked. */
export function releaseService(db: Db, id: number): void {
  db.delete(serviceLinks).where(eq(serviceLinks.serviceId, id)).run();
  db.update(services).set({ deletedAt: nowIso(), purgeOnDelete: true, desiredRunning: false, updatedAt: nowIso() }).where(eq(services.id, id)).run();
}

/** Live fresh services whose preview app no longer exists (a path that deleted the app without them). */
export function orphanPreviewServices(db: Db): ServiceRow[] {
  const rows = db.select().from(services).where(and(isNotNull(services.previewAppId), isNull(services.deletedAt))).all();
  const live = new Set(db.select({ id: apps.id }).from(apps).all().map((a) => a.id));
  return rows.filter((r) => !live.has(r.previewAppId!));
}
