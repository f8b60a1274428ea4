// The backup endpoints through app.request() on :memory: SQLite; archives are plain files the test writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestApi, type TestApi } from '../../support/api.js';
import { completeBackup, failBackup } from '../../../src/store/backups.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
});
afterEach(async () => {
  await rm(t.config.dataDir, { recursive: true, force: true });
});

describe('backup API', () => {
  it('creates a running record (201) and enqueues it; a second create while it runs is 409', async () => {
    const res = await t.request('POST', '/api/backups');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'running', type: 'full', trigger: 'manual', size_bytes: 0, filename: 'svc-backup-20260101-000000.tar.gz', created_at: '2026-01-01T00:00:00Z' });
    expect(t.enqueue.keys).toEqual([`backup:${res.body.id}`]);
    const again = await t.request('POST', '/api/backups');
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect(t.enqueue.keys).toHaveLength(1);
  });

  it('lists newest first, downloads a completed archive as a gzip attachment, deletes with 204', async () => {
    const a = (await t.request('POST', '/api/backups')).body;
    completeBackup(t.db, a.id, 5);
    t.clock.advance(2000);
    const b = (await t.request('POST', '/api/backups')).body;
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

  it('answers 404 for unknown or non-numeric ids and 401 without a session', async () => {
    expect((await t.request('GET', '/api/backups/999/download')).status).toBe(404);
    expect((await t.request('DELETE', '/api/backups/abc')).status).toBe(404);
    expect((await t.request('GET', '/api/backups', undefined, { cookie: 'none' })).status).toBe(401);
  });
});
