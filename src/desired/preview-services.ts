// `previews.services: "fresh"` (issue 20): a preview's own empty instance of each service its parent links
// (`"copy"`, issue 33: the same instance, loaded with a copy of the parent's data when it is first ready)
// (same type, its own generated credentials), linked under the same alias, so the preview's variables have
// the same names and point at its own data. Called inside the previews command's transaction; the rows are
// ordinary services (the service reconciler starts them) marked with the preview app they belong to, and
// every path that deletes the preview app marks them deleted with their data (src/store/previews.ts).
import { existsSync, readdirSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { imageFor, kindOf, serviceContainerName } from '../catalog/catalog.js';
import { listLinks } from '../store/links.js';
import { previewServicesOf, releaseService } from '../store/previews.js';
import { serviceLinks, services } from '../store/schema/index.js';
import { getServiceByName, serviceDataDir } from '../store/services.js';
import { freshServiceName } from '../previews/naming.js';
import { askForCopy } from '../store/service-copies.js';
import type { PreviewSettings } from '../previews/settings.js';
import type { CommandCtx } from './context.js';

/**
 * Makes the preview's fresh services match the parent's links now: one per linked service (created when
 * missing), linked under the parent's alias; any other fresh service of the preview (its parent link gone,
 * or `services` turned to `none`) is released. Returns the service names to enqueue.
 */
export function syncPreviewServices(ctx: CommandCtx, parentId: number, preview: { id: number; name: string }, mode: PreviewSettings['services']): string[] {
  const { db, config } = ctx;
  const wanted = mode === 'fresh' || mode === 'copy' ? listLinks(db, parentId) : [];
  const own = previewServicesOf(db, preview.id);
  const touched: string[] = [];
  for (const { link, service: source } of wanted) {
    let fresh = own.find((s) => s.previewSourceId === source.id && s.type === source.type);
    if (!fresh) {
      const name = freshServiceName(preview.name, source.name, (n) => {
        const dir = serviceDataDir(config.dataDir, n);
        return getServiceByName(db, n) !== undefined || (existsSync(dir) && readdirSync(dir).length > 0);
      });
      const kind = kindOf(source.type);
      fresh = db
        .insert(services)
        .values({
          name,
          type: source.type,
          // The parent's live version, so the preview runs what the app runs.
          version: source.version,
          imageRef: imageFor(kind, config.images, source.version).image,
          containerName: serviceContainerName(config.instance, name),
          internalPort: kind.internalPort,
          dataDir: serviceDataDir(config.dataDir, name),
          credentialsSealed: ctx.sealer.sealJson(kind.generateCredentials(name)),
          previewAppId: preview.id,
          previewSourceId: source.id,
        })
        .returning()
        .get();
      // `copy`: loaded with the parent's data when it is first ready (src/reconcilers/service/copy.ts).
      if (mode === 'copy') askForCopy(db, fresh.id, source.id);
      touched.push(name);
    }
    const current = db.select().from(serviceLinks).where(and(eq(serviceLinks.appId, preview.id), eq(serviceLinks.serviceId, fresh.id))).get();
    if (!current) db.insert(serviceLinks).values({ appId: preview.id, serviceId: fresh.id, alias: link.alias }).run();
    else if (current.alias !== link.alias) db.update(serviceLinks).set({ alias: link.alias }).where(eq(serviceLinks.id, current.id)).run();
  }
  const keep = new Set(wanted.map((w) => w.service.id));
  for (const s of own) {
    if (keep.has(s.previewSourceId ?? -1)) continue;
    releaseService(db, s.id);
    touched.push(s.name);
  }
  return touched;
}
