// replaceState and prepareSnapshot on real SQLite files with the real migrations.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveError } from '../../../src/backup/extract-archive.js';
import { KeyMismatchError, prepareSnapshot, replaceState } from '../../../src/backup/snapshot.js';
import { createSealer } from '../../../src/crypto.js';
import { openDb, type Db } from '../../../src/store/db.js';
import { verifyEncryptionKey } from '../../../src/store/encryption-check.js';

import { apps } from '../../../src/store/schema/index.js';
import { createSession, sessionUser } from '../../../src/store/sessions.js';
import { users } from '../../../src/store/schema/index.js';
import { completeBackup, createBackup, listBackups } from '../../../src/store/backups.js';
import { recordingEnqueue } from '../../support/db.js';
import { createApp } from '../../support/commands.js';

let root: string;
let live: Db;
const sealer = createSealer(Buffer.alloc(32, 1));
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bk-snap-'));
  live = openDb(join(root, 'live.db'));
  verifyEncryptionKey(live, sealer);
});
afterEach(async () => {
  live.$client.close();
  await rm(root, { recursive: true, force: true });
});

const now = new Date('2026-01-01T00:00:00Z');
const app = (name: string) => createApp(live, recordingEnqueue(), { name, imageRef: 'web:v1', accessMode: 'port', fallbackPort: 20000 + name.length }, 'rest');

async function snapshotOfLive(): Promise<string> {
  const path = join(root, 'snap.db');
  await live.$client.backup(path);
  return path;
}

describe('replaceState', () => {
  it('puts back the snapshot rows, keeps backup records and the sessions of restored users', async () => {
    const admin = live.insert(users).values({ username: 'admin', passwordHash: 'x' }).returning().get();
    app('bk-before');
    const snap = await snapshotOfLive();
    prepareSnapshot(snap, live, sealer);

    app('bk-after');
    const session = createSession(live, admin.id, now);
    const ghost = live.insert(users).values({ username: 'ghost', passwordHash: 'x' }).returning().get();
    const ghostSession = createSession(live, ghost.id, now);
    const b = createBackup(live, undefined, { trigger: 'manual', now });
    completeBackup(live, b.id, 1);

    replaceState(live, snap);
    expect(live.select().from(apps).all().map((a) => a.name)).toEqual(['bk-before']);
    expect(sessionUser(live, session, now)?.username).toBe('admin');
    expect(sessionUser(live, ghostSession, now)).toBeUndefined();
    expect(listBackups(live).map((r) => r.id)).toEqual([b.id]);
    expect(live.$client.pragma('foreign_key_check')).toEqual([]);
  });

  it('is all or nothing: a failing copy leaves the live rows as they were', async () => {
    app('bk-before');
    const snap = await snapshotOfLive();
    app('bk-after');
    // A snapshot table the live schema lacks a column for makes the copy fail half-way.
    const { default: Database } = await import('better-sqlite3');
    const raw = new Database(snap);
    raw.exec('ALTER TABLE services RENAME TO services_old; CREATE TABLE services (id integer primary key)');
    raw.close();
    expect(() => replaceState(live, snap)).toThrow();
    expect(live.select().from(apps).all().map((a) => a.name).sort()).toEqual(['bk-after', 'bk-before']);
  });
});

describe('prepareSnapshot', () => {
  it('refuses a file that is not SQLite, a foreign database, and another key', async () => {
    const junk = join(root, 'junk.db');
    await writeFile(junk, 'hello');
    expect(() => prepareSnapshot(junk, live, sealer)).toThrow(ArchiveError);
    const foreign = openDb(':memory:');
    foreign.$client.exec('DROP TABLE apps');
    await foreign.$client.backup(join(root, 'foreign.db'));
    expect(() => prepareSnapshot(join(root, 'foreign.db'), live, sealer)).toThrow(/not a svc database/);
    const snap = await snapshotOfLive();
    await copyFile(snap, join(root, 'other.db'));
    expect(() => prepareSnapshot(join(root, 'other.db'), live, createSealer(Buffer.alloc(32, 2)))).toThrow(KeyMismatchError);
  });
});
