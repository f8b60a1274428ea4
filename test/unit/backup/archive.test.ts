// createArchive on a real file database and temp dirs, with a fake engine answering the dump exec.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { createArchive } from '../../../src/backup/create-archive.js';
import { envFileText } from '../../../src/backup/env-text.js';
import { openDb, type Db } from '../../../src/store/db.js';

import { silentLogger } from '../../../src/log.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { recordingEnqueue, testSealer } from '../../support/db.js';
import { createService } from '../../support/commands.js';

let root: string;
let db: Db;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bk-archive-'));
  db = openDb(join(root, 'data', 'svc.db'));
});
afterEach(async () => {
  db.$client.close();
  await rm(root, { recursive: true, force: true });
});

async function setup() {
  const sealer = testSealer();
  const dataDir = join(root, 'data');
  const runtime = new FakeRuntime({ images: ['pg', 'redis'] });
  const config = { dataDir, instance: 'svc', images: { postgres: 'pg', mysql: 'my', redis: 'redis', garage: 'g' } };
  const pg = createService(db, sealer, recordingEnqueue(), config, { name: 'bk-pg', type: 'postgres' });
  createService(db, sealer, recordingEnqueue(), config, { name: 'bk-cache', type: 'redis' });
  await runtime.run({ name: pg.containerName, image: 'pg', labels: {} });
  runtime.execHandler = (_name, cmd) => ({ exitCode: 0, stdout: `-- dump by ${cmd[0]}\nCREATE TABLE t();\n`, stderr: '' });
  await writeFile(join(dataDir, 'services', 'bk-pg', 'PG_VERSION'), '16\n');
  await writeFile(join(dataDir, 'services', 'bk-cache', 'dump.rdb'), 'REDIS');
  await mkdir(join(dataDir, 'proxy', 'caddy', 'certificates'), { recursive: true });
  await writeFile(join(dataDir, 'proxy', 'caddy', 'certificates', 'site.crt'), 'CERT');
  const env = { SVC_ENCRYPTION_KEY: 'a2V5', SVC_PORT: '3000', SVC_PUBLIC_URL: 'http://x y' };
  const deps = { db, sealer, runtime, log: silentLogger, dataDir, backupDir: join(dataDir, 'backups'), effectiveEnv: env };
  return { deps, runtime, env };
}

describe('createArchive', () => {
  it('holds svc.db, dumps, service data, proxy files and .env with the contract modes', async () => {
    const { deps, runtime, env } = await setup();
    db.$client.exec("INSERT INTO settings (key, value, updated_at) VALUES ('marker', 'before', 'now')");
    const size = await createArchive(deps, 'svc-backup-20260101-000000.tar.gz');
    const file = join(deps.backupDir, 'svc-backup-20260101-000000.tar.gz');
    expect((await stat(file)).size).toBe(size);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(deps.backupDir)).mode & 0o777).toBe(0o700);
    // Only the published archive is left in the backup dir.
    expect(await readdir(deps.backupDir)).toEqual(['svc-backup-20260101-000000.tar.gz']);
    // Only the running relational service was dumped, with the catalog's command.
    expect(runtime.callsOf('exec').map((a) => (a[1] as string[])[0])).toEqual(['pg_dumpall']);

    const out = join(root, 'out');
    await mkdir(out);
    const entries: string[] = [];
    await tar.x({ file, cwd: out, onReadEntry: (e) => void entries.push(e.path) });
    expect(entries).toEqual(expect.arrayContaining(['svc.db', '.env', 'dumps/bk-pg.sql', 'services/bk-pg/PG_VERSION', 'services/bk-cache/dump.rdb', 'proxy/caddy/certificates/site.crt']));
    const snap = new Database(join(out, 'svc.db'), { readonly: true });
    expect(snap.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(snap.prepare("SELECT value FROM settings WHERE key='marker'").pluck().get()).toBe('before');
    snap.close();
    expect(parseEnv(await readFile(join(out, '.env'), 'utf8'))).toEqual(env);
    expect(await readFile(join(out, 'dumps', 'bk-pg.sql'), 'utf8')).toContain('CREATE TABLE t();');
  });

  it('fails with the dump error and publishes nothing', async () => {
    const { deps, runtime } = await setup();
    runtime.execHandler = () => ({ exitCode: 1, stdout: '', stderr: 'pg_dumpall: error: connection refused' });
    await expect(createArchive(deps, 'svc-backup-20260101-000000.tar.gz')).rejects.toThrow(/dump of service bk-pg failed.*connection refused/);
    expect(await readdir(deps.backupDir)).toEqual([]);
  });

  it('keeps symbolic links as links', async () => {
    const { deps } = await setup();
    await symlink('PG_VERSION', join(deps.dataDir, 'services', 'bk-pg', 'version-link'));
    await createArchive(deps, 'svc-backup-20260101-000001.tar.gz');
    const seen: { path: string; type: string; linkpath?: string }[] = [];
    await tar.t({ file: join(deps.backupDir, 'svc-backup-20260101-000001.tar.gz'), onReadEntry: (e) => void seen.push({ path: e.path, type: e.type, linkpath: e.linkpath }) });
    expect(seen).toContainEqual({ path: 'services/bk-pg/version-link', type: 'SymbolicLink', linkpath: 'PG_VERSION' });
  });
});

describe('envFileText', () => {
  it('reads back to the same values', () => {
    const vars = { A: 'plain', B: 'with space', C: "it's", D: 'multi\nline', E: '' };
    expect(parseEnv(envFileText(vars))).toEqual(vars);
  });
});
