// Row queries of pull-request previews (src/store/schema/previews.ts). No rules: src/desired/previews.ts.
import { and, eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { apps, previews, type PreviewRow } from './schema/index.js';

export function getPreview(db: Db, parentId: number, prNumber: number): PreviewRow | undefined {
  return db.select().from(previews).where(and(eq(previews.parentId, parentId), eq(previews.prNumber, prNumber))).get();
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

/** The preview apps of `parentId` deleted (their preview rows go by cascade); returns their names to announce. */
export function deletePreviewApps(db: Db, parentId: number): string[] {
  const rows = db.select({ id: apps.id, name: apps.name }).from(previews).innerJoin(apps, eq(apps.id, previews.appId)).where(eq(previews.parentId, parentId)).all();
  for (const r of rows) db.delete(apps).where(eq(apps.id, r.id)).run();
  return rows.map((r) => r.name);
}
