// extractArchive against hand-made hostile archives: each is refused with a reason, and nothing is
// written outside the staging directory (the test looks at the staging dir's parent afterwards).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, createGzip } from 'node:zlib';
import { Header } from 'tar';
import { ArchiveError, extractArchive } from '../../../src/backup/extract-archive.js';

interface E { path: string; type?: string; data?: string | Buffer; linkpath?: string; size?: number; uid?: number; gid?: number; mode?: number; mtime?: Date }

function block(e: E): Buffer {
  const data = typeof e.data === 'string' ? Buffer.from(e.data) : (e.data ?? Buffer.alloc(0));
  const h = new Header({ path: e.path, type: (e.type ?? 'File') as never, mode: e.mode ?? 0o600, size: e.size ?? data.length, mtime: e.mtime ?? new Date(0), linkpath: e.linkpath, uid: e.uid ?? 0, gid: e.gid ?? 0 });
  h.encode();
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([h.block!, data, pad]);
}
const tarOf = (entries: E[]) => Buffer.concat([...entries.map(block), Buffer.alloc(1024)]);
const DB: E = { path: 'svc.db', data: 'SQLite format 3\0' };

let root: string;
let staging: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bk-extract-'));
  staging = join(root, 'work', 'staging');
  await mkdir(staging, { recursive: true });
});
afterEach(async () => rm(root, { recursive: true, force: true }));

async function archive(entries: E[]) {
  const file = join(root, 'a.tar.gz');
  await writeFile(file, gzipSync(tarOf(entries)));
  return file;
}
/** Everything under root except the archive and the staging dir itself. */
const outside = async () => (await readdir(root, { recursive: true })).filter((p) => !p.startsWith('a.tar.gz') && !p.startsWith('work/staging') && p !== 'work').sort();

describe('extractArchive', () => {
  it('unpacks the layout and reports what it holds', async () => {
    const file = await archive([DB, { path: '.env', data: 'A=1\n' }, { path: 'dumps/', type: 'Directory' }, { path: 'dumps/db.sql', data: 'x' },
      { path: 'services/db/', type: 'Directory' }, { path: 'services/db/PG_VERSION', data: '16' }, { path: 'services/db/link', type: 'SymbolicLink', linkpath: 'PG_VERSION' },
      { path: 'proxy/caddy/cert.pem', data: 'c' }]);
    const got = await extractArchive(file, staging);
    expect(got).toMatchObject({ serviceDirs: ['db'], dumps: ['db'], hasEnv: true, hasProxy: true });
    expect(await readFile(join(staging, 'services/db/link'), 'utf8')).toBe('16');
  });

  it('gives entries under services/ and volumes/ their numeric owner, mode and time; the rest stays root, owner-only (issue 35)', async () => {
    const u = { uid: 1001, gid: 1001 };
    const t = new Date('2026-03-04T05:06:07Z');
    const file = await archive([
      { ...DB, ...u, mode: 0o644 }, { path: '.env', data: 'A=1\n', ...u, mode: 0o644 }, { path: 'proxy/cert.pem', data: 'c', ...u, mode: 0o644 },
      { path: 'dumps/', type: 'Directory', ...u, mode: 0o755 }, { path: 'dumps/db.sql', data: 'x', ...u, mode: 0o644 },
      { path: 'services/', type: 'Directory', mode: 0o700 },
      { path: 'services/cache/', type: 'Directory', ...u, mode: 0o750, mtime: t },
      { path: 'services/cache/appendonly.aof', data: 'SET k v', ...u, mode: 0o640, mtime: t },
      { path: 'services/cache/tool', data: '#!', ...u, mode: 0o4755 },
      { path: 'services/cache/shared/', type: 'Directory', uid: 1001, gid: 1002, mode: 0o2770 },
      { path: 'services/cache/ro/', type: 'Directory', ...u, mode: 0o500 },
      { path: 'services/cache/ro/inside', data: 'y', ...u, mode: 0o400 },
      { path: 'services/cache/last', type: 'SymbolicLink', linkpath: 'appendonly.aof', ...u },
      { path: 'volumes/web/data/', type: 'Directory', mode: 0o777 },
      { path: 'volumes/web/data/notes.txt', data: 'n', uid: 1001, gid: 1001, mode: 0o644 },
      { path: 'volumes/web/data/sub/', type: 'Directory', uid: 1001, gid: 1001, mode: 0o750 },
    ]);
    await extractArchive(file, staging, { chown: true });
    const of = async (p: string, l = false) => {
      const st = l ? await lstat(join(staging, p)) : await stat(join(staging, p));
      return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
    };
    expect(await of('services/cache')).toBe('1001:1001 750');
    expect(await of('services/cache/appendonly.aof')).toBe('1001:1001 640');
    expect((await stat(join(staging, 'services/cache/appendonly.aof'))).mtime.toISOString()).toBe(t.toISOString());
    expect((await stat(join(staging, 'services/cache'))).mtime.toISOString()).toBe(t.toISOString());
    expect(await of('services/cache/tool')).toBe('1001:1001 755'); // set-user-id dropped
    expect(await of('services/cache/shared')).toBe('1001:1002 2770'); // a directory's set-group-id kept
    expect(await of('services/cache/ro')).toBe('1001:1001 500'); // read-only, yet its file was written first
    expect(await readFile(join(staging, 'services/cache/ro/inside'), 'utf8')).toBe('y');
    expect(await of('services/cache/last', true)).toMatch(/^1001:1001 /);
    expect(await of('services')).toBe('0:0 700');
    expect(await of('volumes/web/data')).toBe('0:0 777');
    expect(await of('volumes/web/data/notes.txt')).toBe('1001:1001 644');
    expect(await of('volumes/web/data/sub')).toBe('1001:1001 750');
    // The daemon's own files: root's and owner-only, whatever the archive says.
    expect(await of('svc.db')).toBe('0:0 600');
    expect(await of('.env')).toBe('0:0 600');
    expect(await of('proxy/cert.pem')).toBe('0:0 600');
    expect(await of('dumps/db.sql')).toBe('0:0 600');
    expect(await of('dumps')).toBe('0:0 700');
  });

  it('without chown (a daemon not running as root) keeps the modes and leaves the owner to the process', async () => {
    const file = await archive([DB, { path: 'volumes/web/data/notes.txt', data: 'n', uid: 1001, gid: 1001, mode: 0o644 }]);
    await extractArchive(file, staging, { chown: false });
    const st = await stat(join(staging, 'volumes/web/data/notes.txt'));
    expect([st.uid, (st.mode & 0o777).toString(8)]).toEqual([process.getuid!(), '644']);
  });

  it('refuses a hostile entry under services/ even with an owner, and gives nothing an owner (checks stay first)', async () => {
    const file = await archive([DB, { path: 'services/db/', type: 'Directory', uid: 1001, gid: 1001, mode: 0o777 }, { path: 'services/db/out', type: 'SymbolicLink', linkpath: '../../..', uid: 1001 }]);
    await expect(extractArchive(file, staging, { chown: true })).rejects.toThrow(/points outside/);
    expect((await stat(join(staging, 'services/db'))).uid).toBe(0);
    expect(await outside()).toEqual([]);
  });

  it.each<[string, E[], RegExp]>([
    ['path traversal with ..', [DB, { path: 'services/db/../../../evil', data: 'x' }], /climbs out/],
    ['an absolute path', [DB, { path: '/tmp/evil', data: 'x' }], /absolute/],
    ['a name outside the layout', [DB, { path: 'etc/passwd', data: 'x' }], /not part of a svc backup/],
    ['a symlink pointing outside', [DB, { path: 'services/db/out', type: 'SymbolicLink', linkpath: '../../../..' }], /points outside/],
    ['an absolute symlink', [DB, { path: 'services/db/out', type: 'SymbolicLink', linkpath: '/etc' }], /absolute path/],
    ['a write through a link', [DB, { path: 'services/db', type: 'SymbolicLink', linkpath: '../proxy' }, { path: 'services/db/x', data: 'x' }], /through the link/],
    ['a device', [DB, { path: 'services/db/null', type: 'CharacterDevice' }], /CharacterDevice/],
    ['a FIFO', [DB, { path: 'services/db/fifo', type: 'FIFO' }], /FIFO/],
    ['a hard link to nothing in the archive', [DB, { path: 'services/db/h', type: 'Link', linkpath: 'etc/shadow' }], /not part of a svc backup/],
    ['an invalid service name', [DB, { path: 'services/Bad_Name/x', data: 'x' }], /invalid service/],
    ['no svc.db (a foreign archive)', [{ path: 'services/db/x', data: 'x' }], /no svc.db/],
  ])('refuses %s and writes nothing outside staging', async (_, entries, reason) => {
    const file = await archive(entries);
    const err = await extractArchive(file, staging).catch((e) => e);
    expect(err).toBeInstanceOf(ArchiveError);
    expect(err.message).toMatch(reason);
    expect(await outside()).toEqual([]);
  });

  it('refuses a truncated archive and garbage', async () => {
    const full = gzipSync(tarOf([DB, { path: 'services/db/x', data: Buffer.alloc(100_000, 1) }]));
    const file = join(root, 'a.tar.gz');
    await writeFile(file, full.subarray(0, Math.floor(full.length / 2)));
    await expect(extractArchive(file, staging)).rejects.toThrow(ArchiveError);
    await writeFile(file, 'not an archive at all');
    await expect(extractArchive(file, staging)).rejects.toThrow(ArchiveError);
  });

  it('cuts off a 2 GB decompression bomb at its header', async () => {
    const file = join(root, 'a.tar.gz');
    const gz = createGzip({ level: 1 });
    const out = gz.pipe(createWriteStream(file));
    gz.write(block(DB));
    const size = 2 * 1024 ** 3;
    gz.write(block({ path: 'services/db/zeros', size }).subarray(0, 512));
    const mib = Buffer.alloc(1024 ** 2);
    for (let i = 0; i < 2048; i++) if (!gz.write(mib)) await once(gz, 'drain');
    gz.end(Buffer.alloc(1024));
    await once(out, 'close');
    const err = await extractArchive(file, staging).catch((e) => e);
    expect(err).toBeInstanceOf(ArchiveError);
    expect(err.message).toMatch(/decompression cap/);
    expect(await readdir(join(staging, 'services', 'db')).catch(() => [])).toEqual([]);
  });

  it('counts unpacked bytes across entries against the cap', async () => {
    const file = await archive([DB, { path: 'services/db/a', data: Buffer.alloc(600_000) }, { path: 'services/db/b', data: Buffer.alloc(600_000) }]);
    await expect(extractArchive(file, staging, { capBytes: 1_000_000 })).rejects.toThrow(/decompression cap/);
  });
});
