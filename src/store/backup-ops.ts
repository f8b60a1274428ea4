// Rows of the restore and import operations (schema/backup-ops.ts): plain reads and writes, no rules.
// `updated_at` moves with every write, so a client following an operation sees when it last changed.
import { and, desc, eq, inArray, notInArray } from 'drizzle-orm';
import type { Db } from './db.js';
import { imports, restores, RESTORE_PHASES } from './schema/index.js';

export type RestoreRow = typeof restores.$inferSelect;
export type RestorePhase = (typeof RESTORE_PHASES)[number];
export type ImportRow = typeof imports.$inferSelect;

const stamp = (now: Date) => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Phases after which nothing more happens. */
export const RESTORE_DONE: RestorePhase[] = ['completed', 'failed'];

export const getRestore = (db: Db, id: number): RestoreRow | undefined => db.select().from(restores).where(eq(restores.id, id)).get();
export const activeRestores = (db: Db): RestoreRow[] => db.select().from(restores).where(notInArray(restores.phase, RESTORE_DONE)).orderBy(restores.id).all();
export const listRestores = (db: Db): RestoreRow[] => db.select().from(restores).orderBy(desc(restores.id)).all();

export function insertRestore(db: Db, backupId: number, now: Date): RestoreRow {
  return db.insert(restores).values({ backupId, createdAt: stamp(now), updatedAt: stamp(now) }).returning().get();
}

export function updateRestore(db: Db, id: number, set: Partial<Pick<RestoreRow, 'phase' | 'safetyBackupId' | 'attempts' | 'error' | 'code'>>, now = new Date()): RestoreRow {
  return db.update(restores).set({ ...set, updatedAt: stamp(now) }).where(eq(restores.id, id)).returning().get()!;
}

export const getImport = (db: Db, id: number): ImportRow | undefined => db.select().from(imports).where(eq(imports.id, id)).get();
export const importsIn = (db: Db, statuses: ImportRow['status'][]): ImportRow[] => db.select().from(imports).where(inArray(imports.status, statuses)).orderBy(imports.id).all();

export function insertImport(db: Db, now: Date): ImportRow {
  return db.insert(imports).values({ createdAt: stamp(now), updatedAt: stamp(now) }).returning().get();
}

/** An import of a copy in a backup target's bucket: `checking` at once, the reconciler downloads it first. */
export function insertRemoteImport(db: Db, now: Date, source: { targetId: number; key: string }): ImportRow {
  return db
    .insert(imports)
    .values({ status: 'checking', sourceTargetId: source.targetId, sourceKey: source.key, createdAt: stamp(now), updatedAt: stamp(now) })
    .returning()
    .get();
}

export function updateImport(db: Db, id: number, set: Partial<Pick<ImportRow, 'status' | 'sizeBytes' | 'backupId' | 'error' | 'code'>>, now = new Date()): ImportRow {
  return db.update(imports).set({ ...set, updatedAt: stamp(now) }).where(eq(imports.id, id)).returning().get()!;
}

/** Only while it is unfinished: a settled import keeps its row as the answer. */
export const deleteUploadingImport = (db: Db, id: number) => db.delete(imports).where(and(eq(imports.id, id), eq(imports.status, 'uploading'))).run();

