// Backups against a whole daemon, the real engine and the Postgres and MariaDB stand-ins: the archive
// holds a sound svc.db, both dumps, the service data and the .env, with the contract's modes.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';
import { sql, type SqlService } from '../support/backup-sql.js';

let d: TestDaemon;
let scratch: string;
let pg: SqlService;
let my: SqlService;

beforeAll(async () => {
  await ensureServiceImages();
  scratch = await mkdtemp(join(tmpdir(), 'svc-bk-it-'));
  d = await startTestDaemon('bk', {
    SVC_IMAGE_POSTGRES: SERVICE_TEST_IMAGES.postgres,
    SVC_IMAGE_MYSQL: SERVICE_TEST_IMAGES.mysql,
  });
  pg = await sql(d, 'bk-pg', 'postgres');
  my = await sql(d, 'bk-my', 'mysql');
  await pg.run('CREATE TABLE notes (id int PRIMARY KEY, body text)');
  await my.run('CREATE TABLE notes (id int PRIMARY KEY, body text)');
});

afterAll(async () => {
  await d?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** SPEC.md 4.6: the create answers the completed record, so a script can download it at once. */
async function backupNow(): Promise<{ id: number; filename: string; size_bytes: number }> {
  const res = await d.api('POST', '/api/backups');
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe('completed');
  return res.body;
}

async function download(id: number, to: string) {
  const res = await fetch(`${d.url}/api/backups/${id}/download`, { headers: { authorization: `Bearer ${d.token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/gzip');
  await writeFile(to, Buffer.from(await res.arrayBuffer()));
}

describe('backup archive', () => {
  it('holds svc.db (integrity ok), both dumps with their rows, service data and .env, modes 600/700', async () => {
    await pg.run("INSERT INTO notes VALUES (1, 'pg-before')");
    await my.run("INSERT INTO notes VALUES (1, 'my-before')");
    // What the code-host manifest flow writes after the start: the key file and the `.env` on disk.
    await writeFile(join(d.dataDir, 'codehost-app.pem'), '-----BEGIN RSA PRIVATE KEY-----\nK\n', { mode: 0o600 });
    await writeFile(join(d.dataDir, '.env'), `SVC_CODEHOST_APP_ID=77\nSVC_CODEHOST_APP_PRIVATE_KEY=${join(d.dataDir, 'codehost-app.pem')}\n`, { mode: 0o600 });
    const row = await backupNow();
    expect(row.filename).toMatch(/^svc-backup-\d{8}-\d{6}\.tar\.gz$/);
    const backupDir = join(d.dataDir, 'backups');
    expect((await stat(backupDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(backupDir, row.filename))).mode & 0o777).toBe(0o600);

    const file = join(scratch, 'a.tar.gz');
    await download(row.id, file);
    expect((await stat(file)).size).toBe(row.size_bytes);
    const out = join(scratch, 'a');
    await mkdir(out);
    await tar.x({ file, cwd: out });
    const snap = new Database(join(out, 'svc.db'), { readonly: true });
    expect(snap.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(snap.prepare('SELECT name FROM services ORDER BY name').pluck().all()).toEqual(['bk-my', 'bk-pg']);
    snap.close();
    expect(await readFile(join(out, 'dumps', 'bk-pg.sql'), 'utf8')).toContain('pg-before');
    expect(await readFile(join(out, 'dumps', 'bk-my.sql'), 'utf8')).toContain('my-before');
    expect((await stat(join(out, 'services', 'bk-pg', 'PG_VERSION'))).isFile()).toBe(true);
    expect((await stat(join(out, 'services', 'bk-my'))).isDirectory()).toBe(true);
    const env = parseEnv(await readFile(join(out, '.env'), 'utf8'));
    expect(env.SVC_ENCRYPTION_KEY).toBe(Buffer.alloc(32, 9).toString('base64'));
    expect(env.SVC_DATA_DIR).toBe(d.dataDir);
    expect(env.SVC_CODEHOST_APP_ID).toBe('77');
    expect(await readFile(join(out, 'codehost-app.pem'), 'utf8')).toContain('PRIVATE KEY');
  });
});

describe('restore in place', () => {
  it('brings back the rows from before the backup, drops later ones, keeps the caller logged in, adds the safety backup', async () => {
    await pg.run("INSERT INTO notes VALUES (2, 'pg-before-2')");
    const row = await backupNow();
    await pg.run("INSERT INTO notes VALUES (3, 'pg-after')");
    await my.run("INSERT INTO notes VALUES (3, 'my-after')");
    const later = await d.api('POST', '/api/apps', { name: 'bk-later', image_ref: 'svc-test/web:v1', access_mode: 'port', fallback_port: 18999 });
    expect(later.status).toBe(201);
    // A session created after the backup, for a user the archive has too.
    const login = await fetch(`${d.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'correct horse battery' }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const before = (await d.api('GET', '/api/backups')).body.map((b: { id: number }) => b.id);

    const res = await d.api('POST', `/api/backups/${row.id}/restore?wait=false`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ backup_id: row.id, phase: 'pending', restart_required: false });
    const seen = new Set<string>();
    const op = await waitFor(async () => {
      const r = (await d.api('GET', `/api/restores/${res.body.id}`)).body;
      seen.add(r.phase);
      if (r.phase === 'failed') throw new Error(`restore failed: ${r.error}`);
      return r.phase === 'completed' ? r : undefined;
    }, { timeoutMs: 120_000, intervalMs: 20 });
    expect(seen.has('completed')).toBe(true);
    const after = (await d.api('GET', '/api/backups')).body;
    expect(after.map((b: { id: number }) => b.id)).toEqual([op.safety_backup_id, ...before]);
    expect(after[0]).toMatchObject({ trigger: 'safety', status: 'completed' });

    expect((await fetch(`${d.url}/api/auth/me`, { headers: { cookie } })).status).toBe(200);
    expect((await d.api('GET', '/api/apps')).body.map((a: { name: string }) => a.name)).not.toContain('bk-later');
    for (const s of [pg, my]) {
      await waitFor(async () => (await d.api('GET', `/api/services/${s.id}`)).body.status === 'active', { timeoutMs: 120_000 });
    }
    await waitFor(async () => (await pg.notes().catch(() => [])).length > 0, { timeoutMs: 60_000 });
    expect(await pg.notes()).toEqual(['pg-before', 'pg-before-2']);
    await waitFor(async () => (await my.notes().catch(() => [])).length > 0, { timeoutMs: 60_000 });
    expect(await my.notes()).toEqual(['my-before']);
  });

  it('refuses a corrupt archive with 400 and changes nothing', async () => {
    const bad = await d.api('POST', '/api/backups/import');
    expect(bad.status).toBe(400);
    const res = await fetch(`${d.url}/api/backups/import`, { method: 'POST', headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/gzip' }, body: Buffer.from('garbage, not gzip') });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('invalid_archive');
    expect((await d.api('POST', '/api/backups/999999/restore')).status).toBe(404);
  });
});
