// restoreOffline (the body of `svc restore FILE`) on real files: an archive made by createArchive from one
// data dir is restored into a fresh one; a hostile or foreign archive changes nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { createArchive } from '../../../src/backup/create-archive.js';
import { restoreOffline, SWARM_NOTE } from '../../../src/backup/offline-restore.js';
import { createSealer } from '../../../src/crypto.js';
import { silentLogger } from '../../../src/log.js';
import { openDb } from '../../../src/store/db.js';
import { verifyEncryptionKey } from '../../../src/store/encryption-check.js';

import { FakeRuntime } from '../../support/fake-runtime.js';
import { recordingEnqueue } from '../../support/db.js';
import { createService } from '../../support/commands.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bk-offline-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const KEY = Buffer.alloc(32, 5);

/** An archive of a data dir with one postgres service (stopped: no dump) and a certificate. */
async function makeArchive(o: { envKey?: Buffer; codehost?: boolean; volume?: boolean; swarm?: boolean } = {}) {
  const dataDir = join(root, 'old', 'data');
  const db = openDb(join(dataDir, 'svc.db'));
  const sealer = createSealer(KEY);
  verifyEncryptionKey(db, sealer);
  createService(db, sealer, recordingEnqueue(), { dataDir, instance: 'svc', images: { postgres: 'pg', mysql: 'm', redis: 'r', garage: 'g' } }, { name: 'bk-pg', type: 'postgres' });
  await writeFile(join(dataDir, 'services', 'bk-pg', 'PG_VERSION'), '16\n');
  await mkdir(join(dataDir, 'proxy'), { recursive: true });
  await writeFile(join(dataDir, 'proxy', 'cert.pem'), 'CERT');
  if (o.volume) {
    await mkdir(join(dataDir, 'volumes', 'web', 'uploads', 'a'), { recursive: true });
    await writeFile(join(dataDir, 'volumes', 'web', 'uploads', 'a', 'photo.txt'), 'PHOTO');
    // As the app reconciler makes a volume (0777), and as a non-root app leaves its own files (issue 35).
    await chmod(join(dataDir, 'volumes', 'web', 'uploads'), 0o777);
    await chown(join(dataDir, 'volumes', 'web', 'uploads', 'a'), 1001, 1001);
    await chmod(join(dataDir, 'volumes', 'web', 'uploads', 'a'), 0o750);
    await chown(join(dataDir, 'volumes', 'web', 'uploads', 'a', 'photo.txt'), 1001, 1001);
    await chmod(join(dataDir, 'volumes', 'web', 'uploads', 'a', 'photo.txt'), 0o644);
    // A purged app's files waiting for removal are not data.
    await mkdir(join(dataDir, 'volumes', '.trash', 'old.1.2'), { recursive: true });
    await writeFile(join(dataDir, 'volumes', '.trash', 'old.1.2', 'x'), 'gone');
  }
  const env = { SVC_ENCRYPTION_KEY: (o.envKey ?? KEY).toString('base64'), SVC_DATA_DIR: dataDir, SVC_BACKUP_DIR: join(dataDir, 'backups'), SVC_PORT: '3999', ...(o.swarm ? { SVC_RUNTIME: 'swarm' } : {}) };
  const backupDir = join(dataDir, 'backups');
  // The manifest flow after the start: the key file in the data dir and its settings in the .env on disk.
  const envFile = join(root, 'old', '.env');
  if (o.codehost) {
    await writeFile(join(dataDir, 'codehost-app.pem'), '-----BEGIN RSA PRIVATE KEY-----\nK\n', { mode: 0o644 });
    await writeFile(envFile, `SVC_PORT=3999\nSVC_CODEHOST_APP_ID=42\nSVC_CODEHOST_APP_PRIVATE_KEY=${join(dataDir, 'codehost-app.pem')}\n`);
  }
  await createArchive({ db, sealer, runtime: new FakeRuntime(), log: silentLogger, dataDir, backupDir, effectiveEnv: env, envFile }, 'svc-backup-20260101-000000.tar.gz');
  db.$client.close();
  return join(backupDir, 'svc-backup-20260101-000000.tar.gz');
}

describe('restoreOffline', () => {
  it("of a Swarm's archive with services says their data is on this host's disk only, and what to do about a labelled node", async () => {
    for (const swarm of [false, true]) {
      const archive = await makeArchive({ swarm });
      const dataDir = join(root, `new-${swarm}`, 'data');
      await mkdir(join(root, `new-${swarm}`));
      const { summary } = await restoreOffline({ archivePath: archive, dataDir, envFile: join(root, `new-${swarm}`, '.env') });
      expect(summary.includes(SWARM_NOTE), `swarm ${swarm}`).toBe(swarm);
      expect(await readFile(join(dataDir, 'services', 'bk-pg', 'PG_VERSION'), 'utf8')).toBe('16\n');
      await rm(join(root, 'old'), { recursive: true, force: true });
    }
    expect(SWARM_NOTE).toMatch(/restored on this host's disk.*svc.services=true.*svc uninstall/);
  });

  it('brings back the code-host private key (mode 600) and the .env as it was at backup time, not at the start', async () => {
    const archive = await makeArchive({ codehost: true });
    const dataDir = join(root, 'new', 'data');
    const envFile = join(root, 'new', '.env');
    await mkdir(join(root, 'new'));
    const { summary } = await restoreOffline({ archivePath: archive, dataDir, envFile });
    expect(summary.join('\n')).toContain('code-host app private key restored');
    expect(await readFile(join(dataDir, 'codehost-app.pem'), 'utf8')).toContain('PRIVATE KEY');
    expect((await stat(join(dataDir, 'codehost-app.pem'))).mode & 0o777).toBe(0o600);
    const env = parseEnv(await readFile(envFile, 'utf8'));
    expect(env.SVC_CODEHOST_APP_ID).toBe('42');
    // The setting follows the key into this host's data dir; the start's values stay (the encryption key).
    expect(env.SVC_CODEHOST_APP_PRIVATE_KEY).toBe(join(dataDir, 'codehost-app.pem'));
    expect(env.SVC_ENCRYPTION_KEY).toBe(KEY.toString('base64'));
  });

  it('restores svc.db, service data, proxy files and a .env for this host into a fresh data dir', async () => {
    const archive = await makeArchive();
    const dataDir = join(root, 'new', 'data');
    const envFile = join(root, 'new', '.env');
    await mkdir(join(root, 'new'));
    const { summary } = await restoreOffline({ archivePath: archive, dataDir, envFile });
    expect(summary.join('\n')).toMatch(/svc.db restored[\s\S]*services\/bk-pg[\s\S]*\.env written/);
    // No staging left behind.
    expect((await readdir(dataDir)).sort()).toEqual(['proxy', 'services', 'svc.db']);
    const db = new Database(join(dataDir, 'svc.db'), { readonly: true });
    expect(db.prepare('SELECT name FROM services').pluck().all()).toEqual(['bk-pg']);
    db.close();
    expect(await readFile(join(dataDir, 'services', 'bk-pg', 'PG_VERSION'), 'utf8')).toBe('16\n');
    expect(await readFile(join(dataDir, 'proxy', 'cert.pem'), 'utf8')).toBe('CERT');
    const env = parseEnv(await readFile(envFile, 'utf8'));
    expect(env).toMatchObject({ SVC_ENCRYPTION_KEY: KEY.toString('base64'), SVC_DATA_DIR: dataDir, SVC_PORT: '3999' });
    expect(env.SVC_BACKUP_DIR).toBeUndefined();
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
  });

  it('carries app volumes (volumes/<app>/<name>/...), without the trash, and restores them', async () => {
    const archive = await makeArchive({ volume: true });
    const dataDir = join(root, 'new', 'data');
    await mkdir(join(root, 'new'));
    const { summary } = await restoreOffline({ archivePath: archive, dataDir, envFile: join(root, 'new', '.env') });
    expect(summary).toContain('app volume restored: volumes/web/uploads');
    expect(await readFile(join(dataDir, 'volumes', 'web', 'uploads', 'a', 'photo.txt'), 'utf8')).toBe('PHOTO');
    expect((await readdir(join(dataDir, 'volumes'))).sort()).toEqual(['web']);
    expect((await stat(join(dataDir, 'volumes', 'web', 'uploads'))).mode & 0o777).toBe(0o777);
    // Owners and modes as they were saved (issue 35: were 0:0 0700 / 0600 after a restore).
    const a = await stat(join(dataDir, 'volumes', 'web', 'uploads', 'a'));
    const photo = await stat(join(dataDir, 'volumes', 'web', 'uploads', 'a', 'photo.txt'));
    expect([a.uid, a.gid, (a.mode & 0o7777).toString(8)]).toEqual([1001, 1001, '750']);
    expect([photo.uid, photo.gid, (photo.mode & 0o7777).toString(8)]).toEqual([1001, 1001, '644']);
  });

  it('refuses an archive whose .env key does not open its database, and leaves the data dir as it was', async () => {
    const archive = await makeArchive({ envKey: Buffer.alloc(32, 6) });
    const dataDir = join(root, 'new', 'data');
    await mkdir(join(dataDir, 'services', 'keep'), { recursive: true });
    await writeFile(join(dataDir, 'svc.db'), 'current');
    await expect(restoreOffline({ archivePath: archive, dataDir, envFile: join(root, 'new', '.env') })).rejects.toThrow(/not sealed with the key in its \.env/);
    expect(await readFile(join(dataDir, 'svc.db'), 'utf8')).toBe('current');
    expect((await readdir(dataDir)).sort()).toEqual(['services', 'svc.db']);
    expect(await readdir(join(root, 'new'))).toEqual(['data']);
  });

  it('refuses garbage and a missing file with a sentence', async () => {
    const bad = join(root, 'bad.tar.gz');
    await writeFile(bad, gzipSync(Buffer.from('not a tar')));
    await expect(restoreOffline({ archivePath: bad, dataDir: join(root, 'd'), envFile: join(root, '.env') })).rejects.toThrow(/^cannot restore .*bad\.tar\.gz: /);
    await expect(restoreOffline({ archivePath: join(root, 'nope.tar.gz'), dataDir: join(root, 'd'), envFile: join(root, '.env') })).rejects.toThrow(/no such archive/);
  });
});

describe('archive entry paths of volumes', () => {
  it('accepts volumes/<app>/<name>/..., refuses other names', async () => {
    const { checkEntryPath } = await import('../../../src/backup/extract-archive.js');
    expect(checkEntryPath('volumes/web/uploads/a/b.txt')).toBe('volumes/web/uploads/a/b.txt');
    expect(checkEntryPath('volumes/')).toBe('volumes');
    for (const bad of ['volumes/.trash/x', 'volumes/Web/u', 'volumes/web/../../etc', 'volumes/web/UP/x']) expect(() => checkEntryPath(bad)).toThrow();
  });
});
