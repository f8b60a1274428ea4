// The backup reconciler behind the real manager and work queue, on a fake clock and a :memory: database;
// the archive builder is a fake that a test makes succeed or fail.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createManager } from '../../../src/controller/manager.js';
import { createLogger } from '../../../src/log.js';
import { createBackupReconciler } from '../../../src/reconcilers/backup/reconciler.js';
import { recoverInterruptedBackups, INTERRUPTED } from '../../../src/backup/recover.js';
import { createBackup, listBackups, type BackupRow } from '../../../src/store/backups.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { memoryDb } from '../../support/db.js';
import { waitFor } from '../../support/wait.js';
import { commandCtx } from '../../support/commands.js';
import { createChannel } from '../../../src/desired/notify.js';
import { getOutbox, listOutbox } from '../../../src/store/notify.js';
import { Bus } from '../../../src/events/bus.js';

const MIN = 60_000;
let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

async function setup(o: { intervalMinutes?: number; retainCount?: number; fail?: (row: BackupRow) => string | undefined } = {}) {
  const backupDir = await mkdtemp(join(tmpdir(), 'svc-bk-rec-'));
  dirs.push(backupDir);
  const db = memoryDb();
  const clock = createFakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('debug', {}, (l) => lines.push(JSON.parse(l)));
  const manager = createManager({ runtime: new FakeRuntime(), instance: 'bk-test', clock, log, resyncMs: 24 * 60 * MIN });
  const built: string[] = [];
  const reconciler = createBackupReconciler({
    db,
    bus: new Bus(),
    log,
    clock,
    enqueue: manager.enqueue,
    backupDir,
    settings: { intervalMinutes: o.intervalMinutes ?? 0, retainCount: o.retainCount ?? 10 },
    async build(row) {
      const reason = o.fail?.(row);
      if (reason) throw new Error(reason);
      built.push(row.filename);
      await writeFile(join(backupDir, row.filename), 'archive');
      return 7;
    },
  });
  manager.register(reconciler);
  manager.start();
  return { db, clock, manager, lines, built, backupDir, reconciler };
}

describe('backup reconciler', () => {
  it('writes the archive of a created record and completes it with its size', async () => {
    const { db, manager, clock, lines } = await setup();
    const row = createBackup(db, manager.enqueue, { trigger: 'manual', now: new Date(clock.now()) });
    await clock.advance(10);
    await waitFor(() => listBackups(db)[0].status !== 'running');
    expect(listBackups(db)[0]).toMatchObject({ id: row.id, status: 'completed', sizeBytes: 7 });
    expect(lines.find((l) => l.msg === 'backup created')).toMatchObject({ id: row.id, filename: row.filename, size: 7 });
    await manager.stop();
  });

  it('runs the schedule on the clock, keeps going after a failure, and enforces retention on disk and in records', async () => {
    let n = 0;
    const { db, clock, manager, lines, backupDir } = await setup({ intervalMinutes: 60, retainCount: 2, fail: () => (++n === 2 ? 'disk on fire' : undefined) });
    expect(lines.find((l) => l.msg === 'backup scheduler started')).toMatchObject({ interval_minutes: 60 });
    await clock.advance(59 * MIN);
    expect(listBackups(db)).toHaveLength(0);
    for (let i = 1; i <= 5; i++) {
      await clock.advance(60 * MIN);
      // The build does real file I/O: wait for it to settle before moving time on.
      await waitFor(() => listBackups(db).filter((r) => r.status !== 'running').length >= Math.min(i, 3) && !listBackups(db).some((r) => r.status === 'running'));
    }
    const rows = listBackups(db);
    // 5 slots (at 60, 120, ... 300 min): the 2nd failed and stays visible; completed ones beyond 2 are gone.
    expect(rows.map((r) => [r.status, r.trigger])).toEqual([['completed', 'scheduled'], ['completed', 'scheduled'], ['failed', 'scheduled']]);
    expect(rows[2].error).toBe('disk on fire');
    expect(lines.find((l) => l.msg === 'scheduled backup failed')).toMatchObject({ error: 'disk on fire' });
    expect(lines.filter((l) => l.msg === 'backup deleted')).toHaveLength(2);
    await clock.advance(10);
    await waitFor(async () => (await readdir(backupDir)).length === 2);
    expect((await readdir(backupDir)).sort()).toEqual(rows.filter((r) => r.status === 'completed').map((r) => r.filename).sort());
    await manager.stop();
  });

  it('a failed backup is announced once, with its reason (notifications)', async () => {
    const { db, manager, clock } = await setup({ fail: () => 'pg_dump: connection refused' });
    createChannel(commandCtx(db), { name: 'ops', type: 'slack', events: ['backup_failed'], config: { url: 'http://127.0.0.1:9/x' } }, 'api');
    const row = createBackup(db, manager.enqueue, { trigger: 'manual', now: new Date(clock.now()) });
    await clock.advance(10);
    await waitFor(() => listBackups(db)[0].status === 'failed');
    await manager.stop();
    expect(listOutbox(db).map((m) => [m.event, m.subject])).toEqual([['backup_failed', `backup ${row.filename} failed`]]);
    expect(getOutbox(db, listOutbox(db)[0].id)!.message).toMatch(/^pg_dump: connection refused\. The previous backups are kept/);
  });

  it('is steady: reconciling every name again after a backup writes no row, file or log line (rule 2)', async () => {
    const { db, manager, clock, lines, built, backupDir, reconciler } = await setup({ intervalMinutes: 60, retainCount: 1 });
    createBackup(db, manager.enqueue, { trigger: 'manual', now: new Date(clock.now()) });
    await clock.advance(10);
    await waitFor(() => listBackups(db)[0].status === 'completed');
    await manager.stop();
    await waitFor(async () => (await readdir(backupDir)).length === 1);
    const before = { rows: JSON.stringify(listBackups(db)), files: (await readdir(backupDir)).sort(), lines: lines.length, built: built.length };
    for (const name of await reconciler.listNames()) await reconciler.reconcile(name);
    for (const name of await reconciler.listNames()) await reconciler.reconcile(name);
    expect({ rows: JSON.stringify(listBackups(db)), files: (await readdir(backupDir)).sort(), lines: lines.length, built: built.length }).toEqual(before);
    expect(await reconciler.listNames()).toEqual(['schedule', 'files']);
  });

  it('at start, fails a record left running without a file and completes one whose file was published', async () => {
    const db = memoryDb();
    const backupDir = await mkdtemp(join(tmpdir(), 'svc-bk-rec-'));
    dirs.push(backupDir);
    const a = createBackup(db, undefined, { trigger: 'manual', now: new Date('2026-01-01T00:00:00Z') });
    db.$client.prepare("UPDATE backups SET status='completed' WHERE id=?").run(a.id);
    const b = createBackup(db, undefined, { trigger: 'manual', now: new Date('2026-01-01T00:00:05Z') });
    db.$client.prepare("UPDATE backups SET status='completed' WHERE id=?").run(b.id);
    const lost = createBackup(db, undefined, { trigger: 'scheduled', now: new Date('2026-01-01T00:00:10Z') });
    db.$client.prepare("UPDATE backups SET status='running' WHERE id=?").run(b.id);
    await writeFile(join(backupDir, b.filename), 'complete archive');
    expect(recoverInterruptedBackups({ db, bus: new Bus() }, backupDir, createLogger('error', {}, () => {}))).toBe(2);
    const byId = new Map(listBackups(db).map((r) => [r.id, r]));
    expect(byId.get(b.id)).toMatchObject({ status: 'completed', sizeBytes: 16 });
    expect(byId.get(lost.id)).toMatchObject({ status: 'failed', error: INTERRUPTED });
  });
});
