// One service's dump out of a full-state archive (src/backup/archive-dump.ts), on a real tar.gz.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { create } from 'tar';
import { extractServiceDump } from '../../../src/backup/archive-dump.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-archive-dump-'));
  mkdirSync(join(dir, 'src/dumps'), { recursive: true });
  mkdirSync(join(dir, 'src/services/cache'), { recursive: true });
  writeFileSync(join(dir, 'src/svc.db'), 'db');
  writeFileSync(join(dir, 'src/dumps/pg.sql'), 'CREATE TABLE t (id int);\n');
  writeFileSync(join(dir, 'src/dumps/pg-other.sql'), 'other\n');
  writeFileSync(join(dir, 'src/services/cache/dump.rdb'), 'REDIS');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('extractServiceDump', () => {
  it('copies dumps/<name>.sql alone, gzip-compressed; false for a service without one', async () => {
    const archive = join(dir, 'svc-backup.tar.gz');
    await create({ gzip: true, file: archive, cwd: join(dir, 'src') }, ['svc.db', 'dumps', 'services']);
    expect(await extractServiceDump(archive, 'pg', join(dir, 'pg.sql.gz'))).toBe(true);
    expect(gunzipSync(readFileSync(join(dir, 'pg.sql.gz'))).toString()).toBe('CREATE TABLE t (id int);\n');
    expect(await extractServiceDump(archive, 'cache', join(dir, 'cache.sql.gz'))).toBe(false);
    expect(existsSync(join(dir, 'cache.sql.gz'))).toBe(false);
  });
  it('throws on a file that is not an archive, leaving nothing', async () => {
    writeFileSync(join(dir, 'bad.tar.gz'), 'not gzip');
    await expect(extractServiceDump(join(dir, 'bad.tar.gz'), 'pg', join(dir, 'x.gz'))).rejects.toThrow();
    expect(existsSync(join(dir, 'x.gz'))).toBe(false);
  });
});
