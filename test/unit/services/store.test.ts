import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { createSealer } from '../../../src/crypto.js';
import { apps, services } from '../../../src/store/schema/index.js';
import { getService, listServices, openCredentials, rebaseServices } from '../../../src/store/services.js';
import { linkedServiceEnv, listLinks } from '../../../src/store/links.js';
import { createLink, createService, deleteLink, markServiceDeleted, setDesiredRunning } from '../../support/commands.js';
import { EncryptionKeyError, verifyEncryptionKey } from '../../../src/store/encryption-check.js';
import type { Db } from '../../../src/store/db.js';

const images = { postgres: 'pg', mysql: 'my', redis: 'rd', garage: 'gg' };
let db: Db;
let dir: string;
let enqueue: ReturnType<typeof recordingEnqueue>;
const sealer = testSealer();
const make = (name: string, type = 'postgres') => createService(db, sealer, enqueue, { dataDir: dir, images, instance: 'svc' }, { name, type });
const app = (name: string) => db.insert(apps).values({ name }).returning().get();
const version = (id: number) => db.select().from(apps).where(eq(apps.id, id)).get()!.configVersion;

beforeEach(() => {
  db = memoryDb();
  dir = mkdtempSync(join(tmpdir(), 'svc-store-'));
  enqueue = recordingEnqueue();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('services store', () => {
  it('rebases data dirs and container names recorded under another data directory or instance (a restore on a new host), and only those', () => {
    const moved = make('old-host-db');
    make('here-db');
    db.update(services).set({ dataDir: '/srv/old-host/data/services/old-host-db', containerName: 'svc-old123-svc-old-host-db' }).where(eq(services.id, moved.id)).run();
    expect(rebaseServices(db, { dataDir: dir, instance: 'svc' })).toBe(1);
    expect(listServices(db).map((s) => [s.dataDir, s.containerName]).sort()).toEqual([
      [join(dir, 'services', 'here-db'), 'svc-svc-here-db'],
      [join(dir, 'services', 'old-host-db'), 'svc-svc-old-host-db'],
    ]);
    expect(rebaseServices(db, { dataDir: dir, instance: 'svc' })).toBe(0);
    expect(rebaseServices(db, { dataDir: dir, instance: 'svc-k3x9q2' })).toBe(2);
    expect(getService(db, moved.id)!.containerName).toBe('svc-k3x9q2-svc-old-host-db');
  });

  it('creates a pending service: sealed credentials, data dir, container name, enqueued', () => {
    const row = make('main-db');
    expect(row).toMatchObject({ name: 'main-db', type: 'postgres', status: 'pending', imageRef: 'pg', containerName: 'svc-svc-main-db', internalPort: 5432 });
    expect(row.dataDir).toBe(join(dir, 'services', 'main-db'));
    expect(existsSync(row.dataDir)).toBe(true);
    const creds = openCredentials(sealer, row);
    expect(creds.password).toHaveLength(43);
    expect(row.credentialsSealed).not.toContain(creds.password);
    expect(enqueue.keys).toEqual(['service:main-db']);
  });

  it.each([
    ['Bad', 'postgres', 'invalid', /name/],
    ['1db', 'postgres', 'invalid', /name/],
    ['ok', 'mongo', 'invalid', /valid types: postgres, mysql, redis, garage/],
  ])('refuses name %s type %s', (name, type, status, msg) => {
    expect(() => make(name, type)).toThrow(expect.objectContaining({ kind: status, message: expect.stringMatching(msg) }));
  });

  it('refuses a duplicate name (409), and a data dir that still holds a former service', () => {
    make('db');
    expect(() => make('db', 'redis')).toThrow(expect.objectContaining({ kind: 'conflict' }));
    mkdirSync(join(dir, 'services', 'old'), { recursive: true });
    writeFileSync(join(dir, 'services', 'old', 'PG_VERSION'), '16');
    expect(() => make('old')).toThrow(expect.objectContaining({ kind: 'conflict', message: expect.stringMatching(/former service/) }));
  });

  it('stop and start set the desired state and enqueue', () => {
    const row = make('c', 'redis');
    enqueue.keys.length = 0;
    expect(setDesiredRunning(db, enqueue, row, false).desiredRunning).toBe(false);
    expect(setDesiredRunning(db, enqueue, row, true).desiredRunning).toBe(true);
    expect(enqueue.keys).toEqual(['service:c', 'service:c']);
  });

  it('delete is a state: marked (with purge), hidden from reads, enqueued', () => {
    const row = make('gone', 'redis');
    markServiceDeleted(db, enqueue, row, { purge: true, force: false });
    const raw = db.select().from(services).where(eq(services.id, row.id)).get()!;
    expect(raw.deletedAt).not.toBeNull();
    expect(raw.purgeOnDelete).toBe(true);
    expect(getService(db, row.id)).toBeUndefined();
    expect(listServices(db)).toEqual([]);
    expect(enqueue.keys.at(-1)).toBe('service:gone');
    expect(() => make('gone')).toThrow(expect.objectContaining({ kind: 'conflict', message: expect.stringMatching(/being deleted/) }));
  });

  it('a linked service is not deleted without force; force removes the links and marks the apps changed', () => {
    const s = make('linked');
    const a = app('web');
    createLink(db, enqueue, { appId: a.id, serviceId: s.id });
    expect(() => markServiceDeleted(db, enqueue, s, { purge: false, force: false })).toThrow(expect.objectContaining({ kind: 'conflict' }));
    const before = version(a.id);
    markServiceDeleted(db, enqueue, s, { purge: false, force: true });
    expect(listLinks(db, a.id)).toEqual([]);
    expect(version(a.id)).toBe(before + 1);
    expect(enqueue.keys).toContain('app:web');
  });
});

describe('links store', () => {
  it('links with env keys, bumps the app config version, enqueues the app', () => {
    const s = make('pg');
    const a = app('web');
    enqueue.keys.length = 0;
    const v = createLink(db, enqueue, { appId: a.id, serviceId: s.id, alias: 'DB' });
    expect(v.envKeys).toEqual(['DB_HOST', 'DB_PORT', 'DB_DB', 'DB_USER', 'DB_PASSWORD']);
    expect(version(a.id)).toBe(1);
    expect(enqueue.keys).toEqual(['app:web']);
  });

  it.each([
    ['duplicate link', (s1: number) => ({ serviceId: s1 }), 'conflict'],
    ['missing service', () => ({ serviceId: 999 }), 'not_found'],
  ])('%s', (_n, input, status) => {
    const s1 = make('one').id;
    const a = app('web');
    createLink(db, enqueue, { appId: a.id, serviceId: s1 });
    expect(() => createLink(db, enqueue, { appId: a.id, ...input(s1) })).toThrow(expect.objectContaining({ kind: status }));
  });

  it('missing app is 404', () => {
    const s = make('one');
    expect(() => createLink(db, enqueue, { appId: 42, serviceId: s.id })).toThrow(expect.objectContaining({ kind: 'not_found' }));
  });

  it('refuses two links whose variable names collide, until an alias separates them', () => {
    const a = app('web');
    const p1 = make('p1');
    const p2 = make('p2');
    const r = make('cache', 'redis');
    createLink(db, enqueue, { appId: a.id, serviceId: p1.id });
    expect(() => createLink(db, enqueue, { appId: a.id, serviceId: p2.id })).toThrow(expect.objectContaining({ kind: 'conflict', message: expect.stringMatching(/SQLA_HOST/) }));
    createLink(db, enqueue, { appId: a.id, serviceId: p2.id, alias: 'CACHE' });
    expect(() => createLink(db, enqueue, { appId: a.id, serviceId: r.id })).toThrow(expect.objectContaining({ kind: 'conflict' }));
    createLink(db, enqueue, { appId: a.id, serviceId: r.id, alias: 'REDIS' });
    expect(listLinks(db, a.id).map((l) => l.service.name)).toEqual(['p1', 'p2', 'cache']);
  });

  it('linkedServiceEnv: decrypted values of every linked live service', () => {
    const a = app('web');
    const p = make('main');
    const r = make('cache', 'redis');
    createLink(db, enqueue, { appId: a.id, serviceId: p.id });
    createLink(db, enqueue, { appId: a.id, serviceId: r.id, alias: 'SESSIONS' });
    const pc = openCredentials(sealer, p);
    const rc = openCredentials(sealer, r);
    expect(linkedServiceEnv(db, sealer, a.id)).toEqual({
      SQLA_HOST: 'svc-svc-main', SQLA_PORT: '5432', SQLA_DB: 'app', SQLA_USER: 'svc', SQLA_PASSWORD: pc.password,
      SESSIONS_HOST: 'svc-svc-cache', SESSIONS_PORT: '6379', SESSIONS_PASSWORD: rc.password,
    });
    expect(linkedServiceEnv(db, sealer, 999)).toEqual({});
  });

  it('unlink: 204-able, bumps the version; a missing link is 404', () => {
    const a = app('web');
    const p = make('main');
    createLink(db, enqueue, { appId: a.id, serviceId: p.id });
    deleteLink(db, enqueue, a.id, p.id);
    expect(version(a.id)).toBe(2);
    expect(() => deleteLink(db, enqueue, a.id, p.id)).toThrow(expect.objectContaining({ kind: 'not_found' }));
  });
});

describe('verifyEncryptionKey', () => {
  it('stores a check value at first start and accepts the same key afterwards', () => {
    verifyEncryptionKey(db, sealer);
    expect(() => verifyEncryptionKey(db, testSealer())).not.toThrow();
  });
  it('refuses another key with a clear message', () => {
    verifyEncryptionKey(db, sealer);
    expect(() => verifyEncryptionKey(db, createSealer(Buffer.alloc(32, 9)))).toThrow(EncryptionKeyError);
    expect(() => verifyEncryptionKey(db, createSealer(Buffer.alloc(32, 9)))).toThrow(/SVC_ENCRYPTION_KEY does not match/);
  });
  it('checks existing credentials when a database predates the check value', () => {
    make('old');
    expect(() => verifyEncryptionKey(db, createSealer(Buffer.alloc(32, 9)))).toThrow(EncryptionKeyError);
  });
});
