// The backup reconciler (DESIGN.md rule 13): backups are its work, not the request's and not a timer
// thread's. One key per persisted thing: `backup:<id>` writes the archive of a `running` record and
// completes or fails it; `backup:schedule` creates scheduled records and requeues itself for the next
// slot; `backup:files` removes what no record owns (deleted records, retention, leftovers of an
// interrupted write); `backup:dumps` loads the dumps a restore left waiting (pending-dumps.ts). Restores
// and imports are kinds of their own (operations.ts).
import { backupFailed } from '../../backup/notices.js';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { desc, eq } from 'drizzle-orm';
import type { Clock } from '../../controller/clock.js';
import { keyOf, type Enqueue, type Reconciler, type Result } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import type { Bus } from '../../events/bus.js';
import type { Db } from '../../store/db.js';
import { backups } from '../../store/schema/index.js';
import {
  BACKUP_FILENAME, beyondRetention, completeBackup, createBackup, deleteBackupRecord, failBackup, getBackup, listBackups, runningBackup,
  runningBackups, type BackupRow,
} from '../../store/backups.js';
import { activeRestores } from '../../store/backup-ops.js';
import { planSchedule, strayFiles } from './plan.js';

export interface BackupReconcilerDeps {
  db: Db;
  /** Where a failed backup's notice is told (src/notify/raise.ts). */
  bus: Bus;
  log: Logger;
  clock: Pick<Clock, 'now'>;
  enqueue: Enqueue;
  backupDir: string;
  settings: { intervalMinutes: number; retainCount: number };
  /** Writes the archive of a record (createArchive bound to its deps); resolves to its size in bytes. */
  build(row: BackupRow): Promise<number>;
  /** `backup:dumps`: whether dumps wait, and the pass that loads them. */
  dumps?: { waiting(): boolean; load(): Promise<Result> };
  /** A backup record was settled (wakes requests that wait for it). */
  changed?: () => void;
  /** A backup completed: its off-host copies are queued (src/wiring/backups.ts). */
  completed?: (row: BackupRow) => void;
}

export interface BackupReconciler extends Reconciler {
  /** Builds a record now, in the caller's step (a restore's safety backup); throws when it failed. */
  buildNow(row: BackupRow): Promise<BackupRow>;
}

export function createBackupReconciler(d: BackupReconcilerDeps): BackupReconciler {
  const firstSeenAt = d.clock.now();
  if (d.settings.intervalMinutes > 0) d.log.info('backup scheduler started', { interval_minutes: d.settings.intervalMinutes, retain_count: d.settings.retainCount });

  const enforceRetention = () => {
    try {
      for (const row of beyondRetention(d.db, d.settings.retainCount)) {
        deleteBackupRecord(d.db, row.id);
        d.log.info('backup deleted', { id: row.id, filename: row.filename, reason: 'retention' });
      }
      d.enqueue(keyOf('backup', 'files'));
    } catch (err) {
      d.log.error('backup retention enforcement failed', { error: String((err as Error).message ?? err) });
    }
  };

  const build = async (row: BackupRow): Promise<BackupRow> => {
    const started = d.clock.now();
    try {
      const size = await d.build(row);
      const done = completeBackup(d.db, row.id, size)!;
      d.completed?.(done);
      d.changed?.();
      d.log.info('backup created', { id: row.id, filename: row.filename, size, trigger: row.trigger, duration_ms: d.clock.now() - started });
      return done;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      d.db.transaction(() => {
        failBackup(d.db, row.id, reason);
        backupFailed(d, row, reason);
      });
      d.changed?.();
      const msg = row.trigger === 'scheduled' ? 'scheduled backup failed' : 'backup failed';
      d.log.error(msg, { id: row.id, filename: row.filename, trigger: row.trigger, error: reason });
      throw err;
    } finally {
      enforceRetention();
    }
  };

  const schedule = (): Result => {
    const last = d.db.select().from(backups).where(eq(backups.trigger, 'scheduled')).orderBy(desc(backups.createdAt)).get();
    const plan = planSchedule(
      {
        now: d.clock.now(),
        intervalMinutes: d.settings.intervalMinutes,
        lastScheduledAt: last ? Date.parse(last.createdAt) : undefined,
        // A restore swaps the state a backup would read: its slot waits like one for a running backup.
        running: runningBackup(d.db) !== undefined || activeRestores(d.db).length > 0,
      },
      firstSeenAt,
    );
    switch (plan.action) {
      case 'off':
        return {};
      case 'wait':
        return { requeueAfterMs: plan.inMs };
      case 'busy':
        return { requeueAfterMs: plan.retryInMs };
      case 'create':
        createBackup(d.db, d.enqueue, { trigger: 'scheduled', now: new Date(d.clock.now()) });
        return { requeueAfterMs: plan.nextInMs };
    }
  };

  const files = async (): Promise<Result> => {
    let names: string[];
    try {
      names = await readdir(d.backupDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    const recorded = new Set(listBackups(d.db).map((b) => b.filename));
    for (const f of strayFiles(names, recorded, (n) => BACKUP_FILENAME.test(n))) {
      await rm(join(d.backupDir, f), { recursive: true, force: true });
      d.log.debug('backup dir: removed a file no record owns', { file: f });
    }
    return {};
  };

  return {
    kind: 'backup',
    listNames: () => [
      ...runningBackups(d.db).map((b) => String(b.id)),
      ...(d.settings.intervalMinutes > 0 ? ['schedule'] : []),
      'files',
      ...(d.dumps?.waiting() ? ['dumps'] : []),
    ],
    async reconcile(name) {
      if (name === 'schedule') return schedule();
      if (name === 'files') return files();
      if (/^[1-9][0-9]*$/.test(name)) {
        const row = getBackup(d.db, Number(name));
        if (!row || row.status !== 'running') return {};
        await build(row).catch(() => {});
        return {};
      }
      if (name === 'dumps' && d.dumps) return d.dumps.load();
      return {};
    },
    buildNow: build,
  };
}
