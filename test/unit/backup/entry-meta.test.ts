// The rule of what a restore gives back of an entry besides its bytes (issue 35): a table.
import { describe, expect, it } from 'vitest';
import { keptMeta, type EntryHeader, type MetaType } from '../../../src/backup/entry-meta.js';

const t = new Date('2026-01-02T03:04:05Z');

describe('keptMeta', () => {
  it.each<[string, MetaType, EntryHeader, ReturnType<typeof keptMeta>]>([
    ['services/cache/appendonly.aof', 'File', { uid: 1001, gid: 1001, mode: 0o644, mtime: t }, { uid: 1001, gid: 1001, mode: 0o644, mtime: t }],
    ['services/cache', 'Directory', { uid: 1001, gid: 0, mode: 0o700 }, { uid: 1001, gid: 0, mode: 0o700, mtime: undefined }],
    ['services', 'Directory', { uid: 0, gid: 0, mode: 0o700 }, { uid: 0, gid: 0, mode: 0o700, mtime: undefined }],
    ['volumes/web/data', 'Directory', { uid: 0, gid: 0, mode: 0o777 }, { uid: 0, gid: 0, mode: 0o777, mtime: undefined }],
    ['volumes/web/data/x', 'File', { uid: 1001, gid: 1001, mode: 0o4755 }, { uid: 1001, gid: 1001, mode: 0o755, mtime: undefined }],
    ['volumes/web/data/x', 'File', { uid: 1001, gid: 1001, mode: 0o2755 }, { uid: 1001, gid: 1001, mode: 0o755, mtime: undefined }],
    ['volumes/web/data/shared', 'Directory', { uid: 1001, gid: 50, mode: 0o3775 }, { uid: 1001, gid: 50, mode: 0o3775, mtime: undefined }],
    ['services/db/link', 'SymbolicLink', { uid: 999, gid: 999, mode: 0o777 }, { uid: 999, gid: 999, mtime: undefined }],
    ['services/db/x', 'File', { mode: undefined }, { uid: 0, gid: 0, mode: 0o600, mtime: undefined }],
    ['services/db/x', 'File', { uid: -1, gid: 1.5, mode: 0o640 }, { uid: 0, gid: 0, mode: 0o640, mtime: undefined }],
    ['svc.db', 'File', { uid: 1001, gid: 1001, mode: 0o644 }, undefined],
    ['.env', 'File', { uid: 1001, gid: 1001, mode: 0o644 }, undefined],
    ['proxy/caddy/cert.pem', 'File', { uid: 1001, mode: 0o644 }, undefined],
    ['dumps/db.sql', 'File', { uid: 1001, mode: 0o644 }, undefined],
    ['codehost-app.pem', 'File', { uid: 1001, mode: 0o644 }, undefined],
  ])('%s (%s)', (rel, type, h, want) => {
    expect(keptMeta(rel, type, h)).toEqual(want);
  });
});
