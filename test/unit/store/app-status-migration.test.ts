// The migration that moved observed facts out of `apps` (0004_app_status) copies them for existing rows:
// a database at the previous migration, with a live app, comes up with the same API record.
import { describe, expect, it } from 'vitest';
import { appDetailJson } from '../../../src/presenters/app-json-sql.js';
import { migrateKeepingRows } from '../../../src/store/db.js';
import { dbBefore, MIGRATIONS } from '../../support/migrations.js';

describe('0004_app_status', () => {
  it('moves status, live container, heal counters and the live deploy of existing apps into app_status', () => {
    const { sqlite, db } = dbBefore('0004_app_status');
    sqlite.exec(`INSERT INTO apps (id, name, build_mode, internal_port, image_ref, fallback_port, status, live_container_name, live_container_id, live_address, heal_failures, heal_not_before)
      VALUES (1, 'web', 'svc_build', 80, NULL, 8080, 'active', 'svc-web-2', 'abc', '172.18.0.5', 2, '2026-11-22T10:00:00Z'),
             (2, 'idle', 'external_ci', 3000, 'img:1', 8081, 'inactive', NULL, NULL, NULL, 0, NULL)`);
    sqlite.exec(`INSERT INTO deploys (id, app_id, image_ref, trigger, status) VALUES (2, 1, 'svc-build/web:abc', 'webhook', 'success')`);
    sqlite.exec(`UPDATE apps SET current_deploy_id = 2 WHERE id = 1`);

    migrateKeepingRows(db, MIGRATIONS); // as openDb does: a later rebuild (0007) must not cascade
    expect(sqlite.prepare('SELECT * FROM app_status ORDER BY app_id').all()).toMatchObject([
      { app_id: 1, status: 'active', live_deploy_id: 2, live_image: 'svc-build/web:abc', image_basis: null, port: 80, port_basis: 80, live_container_name: 'svc-web-2', live_container_id: 'abc', live_address: '172.18.0.5', heal_failures: 2, heal_not_before: '2026-11-22T10:00:00Z' },
      { app_id: 2, status: 'inactive', live_deploy_id: null, live_image: 'img:1', image_basis: 'img:1', port: null, port_basis: 3000, live_container_name: null },
    ]);
    const web = JSON.parse(Buffer.from(appDetailJson(db, 1, 'h')!).toString());
    expect(web).toMatchObject({ status: 'active', internal_port: 80, image_ref: 'svc-build/web:abc', live_container_name: 'svc-web-2', current_deploy_id: 2 });
    const idle = JSON.parse(Buffer.from(appDetailJson(db, 2, 'h')!).toString());
    expect(idle).toMatchObject({ status: 'inactive', internal_port: 3000, image_ref: 'img:1', live_container_name: null, current_deploy_id: null });
  });
});
