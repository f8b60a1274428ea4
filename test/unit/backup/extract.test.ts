// extractArchive against hand-made hostile archives: each is refused with a reason, and nothing is
// written outside the staging directory (the test looks at the staging dir's parent afterwards).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, createGzip } from 'node:zlib';
import { Header } from 'tar';
import { ArchiveError, extractArchive } from '../../../src/backup/extract-archive.js';

interface E { path: string; type?: string; data?: string | Buffer; linkpath?: string; size?: number }

function block(e: E): Buffer {
  const data = typeof e.data === 'string' ? Buffer.from(e.data) : (e.data ?? Buffer.alloc(0));
  const h = new Header({ path: e.path, type: (e.type ?? 'File') as never, mode: 0o600, size: e.size ?? data.length, mtime: new Date(0), linkpath: e.linkpath });
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
