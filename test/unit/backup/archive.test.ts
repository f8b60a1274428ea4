// createArchive on a real file database and temp dirs, with a fake engine answering the dump exec.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, chown, lchown, mkdtemp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { createArchive } from '../../../src/backup/create-archive.js';
import { extractArchive } from '../../../src/backup/extract-archive.js';
import { renameUnder } from '../../../src/backup/tar-writer.js';
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

  it('records the numeric owner and mode of every file, directory and link under services/ and volumes/ (issue 35)', async () => {
    const { deps } = await setup();
    const svc = join(deps.dataDir, 'services', 'bk-cache');
    const vol = join(deps.dataDir, 'volumes', 'web', 'data');
    await mkdir(join(vol, 'sub'), { recursive: true });
    await writeFile(join(vol, 'sub', 'notes.txt'), 'n');
    await symlink('sub/notes.txt', join(vol, 'latest'));
    for (const [p, mode] of [[svc, 0o750], [join(svc, 'dump.rdb'), 0o640], [join(vol, 'sub'), 0o750], [join(vol, 'sub', 'notes.txt'), 0o644]] as const) {
      await chown(p, 1001, 1002);
      await chmod(p, mode);
    }
    await lchown(join(vol, 'latest'), 1001, 1002);
    await createArchive(deps, 'svc-backup-20260101-000002.tar.gz');
    const seen = new Map<string, string>();
    await tar.t({ file: join(deps.backupDir, 'svc-backup-20260101-000002.tar.gz'), onReadEntry: (e) => void seen.set(e.path, `${e.uid}:${e.gid} ${((e.mode ?? 0) & 0o7777).toString(8)}`) });
    expect(seen.get('services/bk-cache/')).toBe('1001:1002 750');
    expect(seen.get('services/bk-cache/dump.rdb')).toBe('1001:1002 640');
    expect(seen.get('volumes/web/data/sub/')).toBe('1001:1002 750');
    expect(seen.get('volumes/web/data/sub/notes.txt')).toBe('1001:1002 644');
    expect(seen.get('volumes/web/data/latest')).toMatch(/^1001:1002 /);
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

/** A tar as the engine's archive endpoint answers it for `/data`: entries `data/...`, owners of that disk. */
function engineTar(entries: { path: string; type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link'; body?: string; mode?: number; uid?: number; linkpath?: string }[], cut = 0): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const type = e.type ?? 'File';
    const h = new tar.Header({ path: e.path, type, mode: e.mode ?? 0o644, size: type === 'File' ? body.length : 0, mtime: new Date(0), uid: e.uid ?? 999, gid: e.uid ?? 999, linkpath: e.linkpath });
    h.encode();
    blocks.push(h.block!);
    if (type === 'File' && body.length) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  const all = Buffer.concat(blocks);
  return cut ? all.subarray(0, cut) : all;
}

describe('createArchive: a service whose data is on another node (issue 19)', () => {
  it("reads it there, under services/<name>/, owners and modes kept; the manager's empty copy is not archived", async () => {
    const { deps, runtime } = await setup();
    const cache = 'svc-svc-bk-cache';
    // The manager's directory of a service pinned to a worker: what svc made there, not the data.
    await writeFile(join(deps.dataDir, 'services', 'bk-cache', 'dump.rdb'), 'STALE');
    runtime.dataNodes.set(cache, { id: 'w1', hostname: 'worker-1' });
    runtime.dirArchives.set(
      cache,
      engineTar([
        { path: 'data/', type: 'Directory', mode: 0o755 },
        { path: 'data/dump.rdb', body: 'REDIS-ON-WORKER', mode: 0o640 },
        { path: 'data/appendonlydir/', type: 'Directory', mode: 0o700 },
        { path: 'data/appendonlydir/a.aof', body: 'x'.repeat(1500) },
        { path: 'data/hard', type: 'Link', linkpath: 'data/dump.rdb' },
        { path: 'data/soft', type: 'SymbolicLink', linkpath: 'dump.rdb' },
      ]),
    );
    const file = join(deps.backupDir, 'svc-backup-20260101-000002.tar.gz');
    await createArchive(deps, 'svc-backup-20260101-000002.tar.gz');
    expect(runtime.callsOf('readDir')).toEqual([[cache, '/data']]);
    const seen = new Map<string, { type: string; mode?: number; uid?: number; linkpath?: string; body: string }>();
    await tar.t({
      file,
      onReadEntry: (e) => {
        const row = { type: e.type, mode: e.mode, uid: e.uid, linkpath: e.linkpath, body: '' };
        seen.set(e.path, row);
        e.on('data', (c: Buffer) => (row.body += c.toString()));
      },
    });
    expect(seen.get('services/bk-cache/dump.rdb')).toMatchObject({ type: 'File', mode: 0o640, uid: 999, body: 'REDIS-ON-WORKER' });
    expect(seen.get('services/bk-cache/appendonlydir/a.aof')?.body).toBe('x'.repeat(1500));
    expect(seen.get('services/bk-cache/')).toMatchObject({ type: 'Directory', mode: 0o755 });
    expect(seen.get('services/bk-cache/hard')).toMatchObject({ type: 'Link', linkpath: 'services/bk-cache/dump.rdb' });
    expect(seen.get('services/bk-cache/soft')).toMatchObject({ type: 'SymbolicLink', linkpath: 'dump.rdb' });
    // Once each: the manager's stale copy is not there beside it.
    expect([...seen.keys()].filter((k) => k.startsWith('services/bk-cache')).sort()).toEqual(
      ['services/bk-cache/', 'services/bk-cache/appendonlydir/', 'services/bk-cache/appendonlydir/a.aof', 'services/bk-cache/dump.rdb', 'services/bk-cache/hard', 'services/bk-cache/soft'],
    );
    // The manager's own services are archived as before.
    expect(seen.get('services/bk-pg/PG_VERSION')?.body).toBe('16\n');
    // A restore unpacks it like any archive.
    const out = join(root, 'unpacked');
    await mkdir(out);
    const contents = await extractArchive(file, out);
    expect(contents.serviceDirs.sort()).toEqual(['bk-cache', 'bk-pg']);
    expect(await readFile(join(out, 'services', 'bk-cache', 'hard'), 'utf8')).toBe('REDIS-ON-WORKER');
  });

  it('a stream that breaks inside a file fails the backup, and nothing is published', async () => {
    const { deps, runtime } = await setup();
    runtime.dataNodes.set('svc-svc-bk-cache', { id: 'w1', hostname: 'worker-1' });
    runtime.dirArchives.set('svc-svc-bk-cache', engineTar([{ path: 'data/', type: 'Directory' }, { path: 'data/dump.rdb', body: 'y'.repeat(4000) }], 512 + 512 + 1024));
    await expect(createArchive(deps, 'svc-backup-20260101-000003.tar.gz')).rejects.toThrow(/bk-cache/);
    expect(await readdir(deps.backupDir)).toEqual([]);
  });

  it('a node that cannot be read fails the backup with its reason (never an archive without the data)', async () => {
    const { deps, runtime } = await setup();
    runtime.dataNodes.set('svc-svc-bk-cache', { id: 'w1', hostname: 'worker-1' });
    await expect(createArchive(deps, 'svc-backup-20260101-000004.tar.gz')).rejects.toThrow('No such container: svc-svc-bk-cache');
    expect(await readdir(deps.backupDir)).toEqual([]);
  });
});

describe('renameUnder', () => {
  it.each([
    ['data/', 'services/x'],
    ['data/base/1', 'services/x/base/1'],
    ['./data/a', 'services/x/a'],
    ['data/../etc/passwd', undefined],
    ['/data/a', undefined],
    ['', undefined],
  ])('%s -> %s', (path, want) => {
    expect(renameUnder('services/x', path)).toBe(want);
  });
});

describe('envFileText', () => {
  it('reads back to the same values', () => {
    const vars = { A: 'plain', B: 'with space', C: "it's", D: 'multi\nline', E: '' };
    expect(parseEnv(envFileText(vars))).toEqual(vars);
  });
});
