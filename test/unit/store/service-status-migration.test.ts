// The migration that moved observed facts out of `services` (0022_service_status) copies them for existing
// rows: a database at the previous migration, with services in every state, comes up with the same API record.
import { describe, expect, it } from 'vitest';
import { serviceJson } from '../../../src/presenters/services.js';
import { migrateKeepingRows } from '../../../src/store/db.js';
import { dbBefore, MIGRATIONS } from '../../support/migrations.js';
import { getService } from '../../../src/store/services.js';

describe('0022_service_status', () => {
  it('moves status, error, container id, image, heal counters and activation into service_status', () => {
    const { sqlite, db } = dbBefore('0022_service_status');
    sqlite.exec(`INSERT INTO services (id, name, type, image_ref, status, container_name, container_id, internal_port, data_dir, credentials_sealed, error, heal_failures, heal_not_before, activated_at, updated_at)
      VALUES (1, 'db', 'postgres', 'postgres:16', 'active', 'svc-db', 'c1', 5432, '/d/services/db', 'x', NULL, 1, '2026-11-22T10:00:00Z', '2026-11-01T00:00:00Z', '2026-11-22T09:00:00Z'),
             (2, 'cache', 'redis', 'redis:8', 'error', 'svc-cache', NULL, 6379, '/d/services/cache', 'x', 'could not pull', 3, '2026-11-22T11:00:00Z', NULL, '2026-11-22T09:30:00Z'),
             (3, 'files', 'garage', 'garage:1', 'active', 'svc-files', 'c3', 3900, '/d/services/files', 'x', NULL, 0, NULL, NULL, '2026-11-20T00:00:00Z'),
             (4, 'new-files', 'garage', 'garage:1', 'provisioning', 'svc-new-files', 'c4', 3900, '/d/services/new-files', 'x', NULL, 0, NULL, NULL, '2026-11-21T00:00:00Z')`);
    const before = [1, 2].map((id) => sqlite.prepare('SELECT * FROM services WHERE id = ?').get(id) as Record<string, unknown>);

    migrateKeepingRows(db, MIGRATIONS);
    expect(sqlite.prepare('SELECT * FROM service_status ORDER BY service_id').all()).toMatchObject([
      { service_id: 1, status: 'active', error: null, container_id: 'c1', image_ref: 'postgres:16', heal_failures: 1, heal_not_before: '2026-11-22T10:00:00Z', activated_at: '2026-11-01T00:00:00Z', provisioned_at: null, start_seen_at: null },
      { service_id: 2, status: 'error', error: 'could not pull', container_id: null, heal_failures: 3, activated_at: null, provisioned_at: null },
      // A Garage service that was active was provisioned; one still provisioning is provisioned again.
      { service_id: 3, status: 'active', provisioned_at: '2026-11-20T00:00:00Z' },
      { service_id: 4, status: 'provisioning', provisioned_at: null },
    ]);
    const cols = (sqlite.prepare("SELECT name FROM pragma_table_info('services')").pluck().all() as string[]);
    for (const gone of ['status', 'error', 'container_id', 'heal_failures', 'heal_not_before', 'activated_at']) expect(cols).not.toContain(gone);
    expect(cols).toContain('start_requested_at');

    // The API record reads as before.
    for (const b of before) {
      expect(serviceJson(db, getService(db, b.id as number)!)).toMatchObject({
        id: b.id, name: b.name, status: b.status, error: b.error, image_ref: b.image_ref, container_name: b.container_name, updated_at: b.updated_at,
      });
    }
  });
});
