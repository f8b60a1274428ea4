// The per-service backup routes (src/api/service-backups.ts) with app.request(): answers checked against
// the OpenAPI document by the test API; this server runs no reconcilers, so creations answer 202.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createTestApi } from '../../support/api.js';
import { observeService } from '../../../src/observed/services.js';
import { getServiceBackup, settleServiceBackup } from '../../../src/store/service-backups.js';
import { serviceBackupPath } from '../../../src/reconcilers/service-backup/take.js';

let dir: string;
let t: ReturnType<typeof createTestApi>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sbk-api-'));
  t = createTestApi({ env: { SVC_DATA_DIR: dir } });
  await t.login();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function activeService(name: string, type = 'postgres') {
  const r = await t.request('POST', '/api/services', { name, type });
  expect(r.status).toBe(201);
  observeService(t.db, r.body.id, { status: 'active' });
  return r.body.id as number;
}

describe('per-service backups API', () => {
  it('takes, lists, downloads, schedules, restores and deletes', async () => {
    const id = await activeService('pg');
    const made = await t.request('POST', `/api/services/${id}/backups`);
    expect(made.status).toBe(202);
    expect(made.body).toMatchObject({ service_id: id, trigger: 'manual', status: 'running', remote_status: 'none', remotes: [] });
    expect(t.enqueue.keys).toContain(`service-backup:${made.body.id}`);
    expect((await t.request('POST', `/api/services/${id}/backups`)).status).toBe(409); // one at a time
    expect((await t.request('GET', `/api/services/${id}/backups/${made.body.id}/download`)).status).toBe(409);

    const b = getServiceBackup(t.db, made.body.id)!;
    mkdirSync(dirname(serviceBackupPath(dir, b)), { recursive: true });
    writeFileSync(serviceBackupPath(dir, b), gzipSync('SELECT 1;\n'));
    settleServiceBackup(t.db, b.id, { sizeBytes: 30 });
    const list = await t.request('GET', `/api/services/${id}/backups`);
    expect(list.body.map((x: { id: number; status: string }) => [x.id, x.status])).toEqual([[b.id, 'completed']]);
    const dl = await t.request('GET', `/api/services/${id}/backups/${b.id}/download`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/gzip');
    expect(dl.headers.get('content-disposition')).toBe(`attachment; filename="${b.filename}"`);

    expect((await t.request('PUT', `/api/services/${id}/backup`, { interval_minutes: 60, retain: 3 })).body).toEqual({ interval_minutes: 60, retain: 3 });
    expect((await t.request('PUT', `/api/services/${id}/backup`, { interval_minutes: 'hourly' })).status).toBe(400);
    expect((await t.request('GET', `/api/services/${id}`)).body.backup).toEqual({ interval_minutes: 60, retain: 3 });

    const restored = await t.request('POST', `/api/services/${id}/restore`, { backup_id: b.id });
    expect(restored.status).toBe(202);
    expect(restored.body.restore).toMatchObject({ backup_id: b.id, service_id: id, into_new: false, status: 'running', step: 'safety' });
    expect((await t.request('GET', `/api/services/${id}/restores`)).body).toHaveLength(1);
    expect((await t.request('DELETE', `/api/services/${id}/backups/${b.id}`)).status).toBe(409); // the running restore's
  });

  it('keeps services apart: another service’s backup is a 404; a garage has none (409)', async () => {
    const a = await activeService('pg-a');
    const other = await activeService('pg-b');
    const made = await t.request('POST', `/api/services/${a}/backups`);
    expect((await t.request('GET', `/api/services/${other}/backups/${made.body.id}`)).status).toBe(404);
    expect((await t.request('POST', `/api/services/${other}/restore`, { backup_id: made.body.id })).status).toBe(404);
    const g = await activeService('files', 'garage');
    expect((await t.request('POST', `/api/services/${g}/backups`)).status).toBe(409);
    expect((await t.request('GET', '/api/services/999/backups')).status).toBe(404);
  });
});
