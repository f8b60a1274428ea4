// Ids reach the API (`/services/1`, `/api/apps/7`): a deleted row's id must never name another row later
// (AUTOINCREMENT, migration 0010). The migration rebuilds tables; a database with rows keeps every one.
import { describe, expect, it } from 'vitest';
import { migrateKeepingRows } from '../../../src/store/db.js';
import { dbBefore, MIGRATIONS } from '../../support/migrations.js';
import { memoryDb } from '../../support/db.js';

const TAG = '0010_ids_never_reused';
const API_TABLES = ['apps', 'deploys', 'services', 'users', 'api_tokens', 'backups', 'restores', 'imports', 'deploy_events', 'app_events'];

describe('ids are never reused', () => {
  it.each(API_TABLES)('%s is AUTOINCREMENT', (table) => {
    const db = memoryDb();
    const sql = db.$client.prepare("SELECT sql FROM sqlite_master WHERE type='table' AND name=?").pluck().get(table) as string;
    expect(sql).toMatch(/AUTOINCREMENT/);
  });

  it('a deleted app, service or deploy leaves its id unused', () => {
    const c = memoryDb().$client;
    const app = () => c.prepare("INSERT INTO apps (name) VALUES ('a') RETURNING id").pluck().get() as number;
    const first = app();
    c.prepare('DELETE FROM apps WHERE id = ?').run(first);
    expect(app()).toBeGreaterThan(first);
    const svc = () => c.prepare("INSERT INTO services (name, type, image_ref, container_name, internal_port, data_dir, credentials_sealed) VALUES ('db', 'redis', 'r', 'c', 1, '/d', 'x') RETURNING id").pluck().get() as number;
    const s1 = svc();
    c.prepare('DELETE FROM services WHERE id = ?').run(s1);
    expect(svc()).toBe(s1 + 1);
  });

  it('the migration keeps every row of a database that has them, children included', () => {
    const { sqlite, db } = dbBefore(TAG);
    sqlite.exec(`
      INSERT INTO users (id, username, password_hash) VALUES (3, 'admin', 'h');
      INSERT INTO api_tokens (id, user_id, name, token_hash) VALUES (4, 3, 'ci', 'th');
      INSERT INTO sessions (id, user_id, token_hash, last_seen_at) VALUES (1, 3, 'sh', 'now');
      INSERT INTO apps (id, name, fallback_port) VALUES (5, 'web', 8080), (9, 'api', 8081);
      INSERT INTO app_status (app_id, status, live_deploy_id) VALUES (5, 'active', 7);
      INSERT INTO app_instances (app_id, slot, deploy_id, container_name) VALUES (5, 1, 7, 'svc-web-7-r1');
      INSERT INTO deploys (id, app_id, image_ref, trigger, status) VALUES (7, 5, 'img:1', 'manual', 'success');
      INSERT INTO deploy_events (deploy_id, timestamp, step, message) VALUES (7, 't', 'start', 'm');
      INSERT INTO app_events (app_id, timestamp, step, message) VALUES (5, 't', 'heal', 'm');
      INSERT INTO env_vars (app_id, key, value, updated_at) VALUES (5, 'K', 'v', 't');
      INSERT INTO env_history (app_id, key, action, is_secret, required, changed_at) VALUES (5, 'K', 'created', 0, 0, 't');
      INSERT INTO services (id, name, type, image_ref, container_name, internal_port, data_dir, credentials_sealed) VALUES (2, 'db', 'redis', 'r', 'c', 1, '/d', 'x');
      INSERT INTO service_links (app_id, service_id) VALUES (5, 2);
      INSERT INTO backups (id, filename) VALUES (6, 'b.tar.gz');`);
    const count = (t: string) => sqlite.prepare(`SELECT count(*) FROM ${t}`).pluck().get();
    const tables = ['users', 'api_tokens', 'sessions', 'apps', 'app_status', 'app_instances', 'deploys', 'deploy_events', 'app_events', 'env_vars', 'env_history', 'services', 'service_links', 'backups'];
    const before = Object.fromEntries(tables.map((t) => [t, count(t)]));

    migrateKeepingRows(db, MIGRATIONS);

    expect(Object.fromEntries(tables.map((t) => [t, count(t)]))).toEqual(before);
    expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    expect(sqlite.prepare("INSERT INTO apps (name) VALUES ('new') RETURNING id").pluck().get()).toBe(10);
    // Cascades still work after the rebuild.
    sqlite.exec('DELETE FROM apps WHERE id = 5');
    expect([count('deploys'), count('env_vars'), count('service_links'), count('app_status')]).toEqual([0, 0, 0, 0]);
  });
});
