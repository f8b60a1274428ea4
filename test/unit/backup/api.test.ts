// The backup endpoints through app.request() on :memory: SQLite; archives are plain files the test writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestApi, type TestApi } from '../../support/api.js';
import { completeBackup, failBackup, getBackup } from '../../../src/store/backups.js';
import { getImport, getRestore } from '../../../src/store/backup-ops.js';
import { createProgress } from '../../../src/backup/progress.js';
import { uploadOf } from '../../../src/backup/import.js';
import { waitFor } from '../../support/wait.js';
import { existsSync } from 'node:fs';
import { createBackupReconciler } from '../../../src/reconcilers/backup/reconciler.js';
import { silentLogger } from '../../../src/log.js';
import type { ReconcileCtx } from '../../../src/controller/types.js';
import { Bus } from '../../../src/controller/bus.js';

let t: TestApi;
// The backup reconcilers' signal: the test plays the reconciler (settles the row, then says so).
let progress = createProgress();
beforeEach(async () => {
  progress = createProgress();
  t = createTestApi({ backups: { progress } });
  await t.login();
});
afterEach(async () => {
  await rm(t.config.dataDir, { recursive: true, force: true });
});

describe('backup API', () => {
  it('answers the completed record (201) once the reconciler has written the archive (SPEC.md 4.6)', async () => {
    const pending = t.request('POST', '/api/backups');
    await waitFor(() => t.enqueue.keys.length === 1);
    const id = Number(t.enqueue.keys[0].slice('backup:'.length));
    expect(getBackup(t.db, id)!.status).toBe('running');
    completeBackup(t.db, id, 1234);
    progress.changed();
    const res = await pending;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id, status: 'completed', size_bytes: 1234, trigger: 'manual' });
  });

  it('answers a failed backup with 500 backup_failed and the failed record', async () => {
    const pending = t.request('POST', '/api/backups');
    await waitFor(() => t.enqueue.keys.length === 1);
    const id = Number(t.enqueue.keys[0].slice('backup:'.length));
    failBackup(t.db, id, 'no space left on the backup disk (ENOSPC); nothing was published');
    progress.changed();
    const res = await pending;
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ id, status: 'failed', code: 'backup_failed', error: 'no space left on the backup disk (ENOSPC); nothing was published' });
  });

  it('?wait=false answers the running record (202) and enqueues it; a second create while it runs is 409', async () => {
    const res = await t.request('POST', '/api/backups?wait=false');
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/backups/${res.body.id}`);
    expect(res.body).toMatchObject({ status: 'running', type: 'full', trigger: 'manual', size_bytes: 0, filename: 'svc-backup-20260101-000000.tar.gz', created_at: '2026-01-01T00:00:00Z' });
    expect(t.enqueue.keys).toEqual([`backup:${res.body.id}`]);
    const again = await t.request('POST', '/api/backups?wait=false');
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect(t.enqueue.keys).toHaveLength(1);
  });

  it('lists newest first, downloads a completed archive as a gzip attachment, deletes with 204', async () => {
    const a = (await t.request('POST', '/api/backups?wait=false')).body;
    completeBackup(t.db, a.id, 5);
    t.clock.advance(2000);
    const b = (await t.request('POST', '/api/backups?wait=false')).body;
    expect((await t.request('GET', '/api/backups')).body.map((r: { id: number }) => r.id)).toEqual([b.id, a.id]);
    expect((await t.request('GET', `/api/backups/${b.id}/download`)).status).toBe(409);

    await mkdir(t.config.backupDir, { recursive: true });
    await writeFile(join(t.config.backupDir, a.filename), 'hello');
    const dl = await t.request('GET', `/api/backups/${a.id}/download`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/gzip');
    expect(dl.headers.get('content-disposition')).toBe(`attachment; filename="${a.filename}"`);
    expect(dl.body).toBe('hello');

    expect((await t.request('DELETE', `/api/backups/${b.id}`)).status).toBe(409);
    failBackup(t.db, b.id, 'x');
    expect((await t.request('DELETE', `/api/backups/${b.id}`)).status).toBe(204);
    expect(t.enqueue.keys).toContain('backup:files');
    expect((await t.request('GET', '/api/backups')).body.map((r: { id: number }) => r.id)).toEqual([a.id]);
  });

  it('DELETE answers 204 only once the real backup reconciler has removed the archive (issue 35 defect 3)', async () => {
    const p = createProgress();
    let reconcile: () => Promise<unknown> = async () => {};
    // The reconciler runs `backup:files` a little after the key is enqueued, as the work queue would.
    const api = createTestApi({ backups: { progress: p }, onEnqueue: (key) => key === 'backup:files' && setTimeout(() => void reconcile(), 50) });
    await api.login();
    const rec = createBackupReconciler({
      db: api.db, bus: new Bus(), log: silentLogger, clock: { now: () => Date.now() }, enqueue: api.enqueue, backupDir: api.config.backupDir,
      settings: { intervalMinutes: 0, retainCount: 10 }, build: async () => 0, changed: p.changed,
    });
    reconcile = () => rec.reconcile('files', {} as ReconcileCtx);
    const a = (await api.request('POST', '/api/backups?wait=false')).body;
    completeBackup(api.db, a.id, 5);
    await mkdir(api.config.backupDir, { recursive: true });
    const file = join(api.config.backupDir, a.filename);
    await writeFile(file, 'archive');
    const res = await api.request('DELETE', `/api/backups/${a.id}`);
    expect(res.status).toBe(204);
    expect(existsSync(file)).toBe(false);
    expect(getBackup(api.db, a.id)).toBeUndefined();
  });

  it('DELETE answers 202 with a sentence when the archive is still there after the bound (no reconciler ran)', async () => {
    const api = createTestApi({ backups: { progress: createProgress(), deleteWaitMs: 200 } });
    await api.login();
    const a = (await api.request('POST', '/api/backups?wait=false')).body;
    completeBackup(api.db, a.id, 5);
    await mkdir(api.config.backupDir, { recursive: true });
    const file = join(api.config.backupDir, a.filename);
    await writeFile(file, 'archive');
    const t0 = Date.now();
    const res = await api.request('DELETE', `/api/backups/${a.id}`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ deleted: true, id: a.id, filename: a.filename, archive_removed: false });
    expect(res.body.message).toContain('still in the backup directory');
    expect(getBackup(api.db, a.id)).toBeUndefined();
    expect(api.enqueue.keys).toContain('backup:files');
    await rm(file, { force: true });
  });

  it('answers 404 for unknown or non-numeric ids and 401 without a session', async () => {
    expect((await t.request('GET', '/api/backups/999/download')).status).toBe(404);
    expect((await t.request('DELETE', '/api/backups/abc')).status).toBe(404);
    expect((await t.request('GET', '/api/backups', undefined, { cookie: 'none' })).status).toBe(401);
  });

  it('a restore is an operation: 202 with its pending row and Location, followed with GET /api/restores/{id}', async () => {
    const a = (await t.request('POST', '/api/backups?wait=false')).body;
    expect((await t.request('POST', `/api/backups/${a.id}/restore`)).status).toBe(409); // still running
    completeBackup(t.db, a.id, 5);
    const res = await t.request('POST', `/api/backups/${a.id}/restore?wait=false`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ backup_id: a.id, phase: 'pending', safety_backup_id: null, error: null, restart_required: false });
    expect(res.headers.get('location')).toBe(`/api/restores/${res.body.id}`);
    expect(t.enqueue.keys).toContain(`restore:${res.body.id}`);
    expect((await t.request('GET', `/api/restores/${res.body.id}`)).body).toMatchObject({ id: res.body.id, phase: 'pending' });
    // One restore at a time, and no backup while it runs.
    expect((await t.request('POST', `/api/backups/${a.id}/restore`)).status).toBe(409);
    expect((await t.request('POST', '/api/backups?wait=false')).body.code).toBe('conflict');
    expect((await t.request('GET', '/api/restores/999')).status).toBe(404);
    expect((await t.request('POST', '/api/backups/999/restore')).status).toBe(404);
  });

  it('restore waits by default and answers the outcome (API.md): 200 restored, or the failure with its code', async () => {
    const a = (await t.request('POST', '/api/backups?wait=false')).body;
    completeBackup(t.db, a.id, 5);
    const pending = t.request('POST', `/api/backups/${a.id}/restore`);
    await waitFor(() => t.enqueue.keys.some((k) => k.startsWith('restore:')));
    const rid = Number(t.enqueue.keys.find((k) => k.startsWith('restore:'))!.slice('restore:'.length));
    t.db.$client.prepare("UPDATE restores SET phase = 'failed', code = 'invalid_archive', error = 'archive entry \"/etc\" is an absolute path' WHERE id = ?").run(rid);
    progress.changed();
    const res = await pending;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_archive', restore: { id: rid, phase: 'failed' } });
    expect(getRestore(t.db, rid)!.phase).toBe('failed');
  });

  it('import stores the upload and leaves the checks to import:<id>; ?wait=false answers 202 with the checking row', async () => {
    const res = await t.request('POST', '/api/backups/import?wait=false', undefined, { raw: 'not checked here' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'checking', size_bytes: 16, backup_id: null });
    expect(t.enqueue.keys).toEqual([`import:${res.body.id}`]);
    expect(getImport(t.db, res.body.id)!.status).toBe('checking');
    await expect(stat(uploadOf(t.config.backupDir, res.body.id))).resolves.toMatchObject({ size: 16 });
    expect((await t.request('GET', `/api/backups/imports/${res.body.id}`)).body.status).toBe('checking');
    const empty = await t.request('POST', '/api/backups/import?wait=false', undefined, { raw: '' });
    expect(empty.status).toBe(400);
  });
});
