// Backup records (SPEC.md 2.7, API.md "Backups"). A record is desired state: the API, the schedule and a
// restore's safety step insert it `running` and enqueue `backup:<id>`; the backup reconciler writes the
// archive and completes or fails the record. Only one backup runs at a time (a second create is a 409).
import { desc, eq } from 'drizzle-orm';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import { conflict } from '../errors.js';
import type { Db } from './db.js';
import { backups } from './schema/index.js';

export type BackupRow = typeof backups.$inferSelect;
export type BackupTrigger = BackupRow['trigger'];

/** `svc-backup-YYYYMMDD-HHMMSS.tar.gz` in UTC (SPEC.md 2.7). */
export function backupFilename(at: Date): string {
  const iso = at.toISOString(); // 2026-11-22T10:42:21.123Z
  return `svc-backup-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}.tar.gz`;
}

/** The archive names this module creates or accepts; nothing else is ever opened in the backup dir. */
export const BACKUP_FILENAME = /^svc-backup-\d{8}-\d{6}\.tar\.gz$/;

const isoSeconds = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The running backup, if any. */
export const runningBackup = (db: Db): BackupRow | undefined =>
  db.select().from(backups).where(eq(backups.status, 'running')).get();

/**
 * Inserts a `running` record and enqueues its key. A backup already running is a 409 (API.md: a second
 * create is refused, not queued). A taken file name (two backups in one second) takes the next free second.
 */
export function createBackup(db: Db, enqueue: Enqueue | undefined, o: { trigger: BackupTrigger; now: Date }): BackupRow {
  const row = db.$client.transaction(() => {
    const busy = runningBackup(db);
    if (busy) throw conflict(`backup ${busy.id} (${busy.filename}) is still running; try again when it has finished`, { running_id: busy.id });
    return insertWithFreeName(db, o.now, { status: 'running', trigger: o.trigger });
  })();
  enqueue?.(keyOf('backup', String(row.id)));
  return row;
}

/** Inserts a record named after `at`, or the first later second whose name is free. */
export function insertWithFreeName(db: Db, at: Date, values: Pick<BackupRow, 'status' | 'trigger'> & { sizeBytes?: number }): BackupRow {
  for (let t = Math.floor(at.getTime() / 1000) * 1000; ; t += 1000) {
    const d = new Date(t);
    const filename = backupFilename(d);
    if (db.select({ id: backups.id }).from(backups).where(eq(backups.filename, filename)).get()) continue;
    return db.insert(backups).values({ filename, createdAt: isoSeconds(d), ...values }).returning().get();
  }
}

export const getBackup = (db: Db, id: number): BackupRow | undefined => db.select().from(backups).where(eq(backups.id, id)).get();

/** Newest first (API.md: time-ordered lists are newest first). */
export const listBackups = (db: Db): BackupRow[] => db.select().from(backups).orderBy(desc(backups.createdAt), desc(backups.id)).all();

export function completeBackup(db: Db, id: number, sizeBytes: number): BackupRow | undefined {
  return db.update(backups).set({ status: 'completed', sizeBytes, error: null }).where(eq(backups.id, id)).returning().get();
}

export function failBackup(db: Db, id: number, error: string): BackupRow | undefined {
  return db.update(backups).set({ status: 'failed', error, sizeBytes: 0 }).where(eq(backups.id, id)).returning().get();
}

export const deleteBackupRecord = (db: Db, id: number) => db.delete(backups).where(eq(backups.id, id)).run();

/**
 * Records beyond the retain count, per outcome: completed backups and failed ones are counted apart, so a
 * run of failed scheduled backups never pushes the last good archives out (SPEC.md 8 counts backups).
 */
export function beyondRetention(db: Db, retain: number): BackupRow[] {
  const out: BackupRow[] = [];
  for (const status of ['completed', 'failed'] as const) {
    const rows = db.select().from(backups).where(eq(backups.status, status)).orderBy(desc(backups.createdAt), desc(backups.id)).all();
    out.push(...rows.slice(retain));
  }
  return out;
}

/** Records still `running`: at daemon start these were interrupted (the archive never finished). */
export const runningBackups = (db: Db): BackupRow[] => db.select().from(backups).where(eq(backups.status, 'running')).all();

