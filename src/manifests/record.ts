// The last apply of each manifest source (`manifest_applies`, one row per source): what GET /api/manifests
// shows and what the next apply of the source compares against (its previous revision tells a drift
// correction from a new revision; its resources, with their files, say what a bad file keeps).
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../store/db.js';
import { manifestApplies, nowIso } from '../store/schema/index.js';
import type { ManifestError } from './parse.js';
import type { ManifestSource } from './plan.js';

export interface RecordedResource {
  kind: string;
  name: string;
  file?: string;
}

export interface SourceRecord {
  source: ManifestSource;
  location: string;
  revision: string | null;
  appliedAt: string | null;
  resources: RecordedResource[];
  errors: ManifestError[];
}

/** The content hash that is the revision of a directory or API apply: stable over file order. */
export function contentRevision(files: { file: string; text: string }[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    h.update(f.file).update('\0').update(f.text).update('\0');
  }
  return h.digest('hex');
}

export function getSourceRecord(db: Db, source: ManifestSource): SourceRecord | undefined {
  const row = db.select().from(manifestApplies).where(eq(manifestApplies.source, source)).get();
  if (!row) return undefined;
  return {
    source,
    location: row.location,
    revision: row.revision,
    appliedAt: row.appliedAt,
    resources: row.resources as RecordedResource[],
    errors: row.errors as ManifestError[],
  };
}

/** Writes the source's row only when something differs (DESIGN.md rule 7: no no-op writes). */
export function writeSourceRecord(db: Db, rec: Omit<SourceRecord, 'appliedAt'>, changedSomething: boolean): void {
  const prev = getSourceRecord(db, rec.source);
  const same =
    prev &&
    !changedSomething &&
    prev.location === rec.location &&
    prev.revision === rec.revision &&
    JSON.stringify(prev.resources) === JSON.stringify(rec.resources) &&
    JSON.stringify(prev.errors) === JSON.stringify(rec.errors);
  if (same) return;
  const values = { location: rec.location, revision: rec.revision, appliedAt: nowIso(), resources: rec.resources, errors: rec.errors };
  if (prev) db.update(manifestApplies).set(values).where(eq(manifestApplies.source, rec.source)).run();
  else db.insert(manifestApplies).values({ source: rec.source, ...values }).run();
}

/** Every source that ever applied, for GET /api/manifests. */
export function listSourceRecords(db: Db) {
  return db
    .select()
    .from(manifestApplies)
    .all()
    .map((row) => ({
      source: row.source,
      location: row.location,
      revision: row.revision,
      applied_at: row.appliedAt,
      resources: (row.resources as RecordedResource[]).map((r) => ({ kind: r.kind, name: r.name, ...(r.file ? { file: r.file } : {}) })),
      errors: row.errors,
    }));
}
