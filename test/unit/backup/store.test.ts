import { describe, expect, it } from 'vitest';
import {
  BACKUP_FILENAME, backupFilename, beyondRetention, completeBackup, createBackup, failBackup, insertWithFreeName, listBackups,
} from '../../../src/store/backups.js';
import { DomainError } from '../../../src/errors.js';
import { memoryDb, recordingEnqueue } from '../../support/db.js';

const at = (s: string) => new Date(s);

describe('backup records', () => {
  it('names archives after the UTC second as SPEC.md 2.7 shows', () => {
    expect(backupFilename(at('2026-11-22T10:42:21.987Z'))).toBe('svc-backup-20261122-104221.tar.gz');
    expect(BACKUP_FILENAME.test('svc-backup-20261122-104221.tar.gz')).toBe(true);
    expect(BACKUP_FILENAME.test('../svc-backup-20261122-104221.tar.gz')).toBe(false);
  });

  it('creates a running record, enqueues it, and refuses a second while one runs', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const row = createBackup(db, enqueue, { trigger: 'manual', now: at('2026-01-01T00:00:00Z') });
    expect(row).toMatchObject({ status: 'running', trigger: 'manual', filename: 'svc-backup-20260101-000000.tar.gz', createdAt: '2026-01-01T00:00:00Z' });
    expect(enqueue.keys).toEqual([`backup:${row.id}`]);
    expect(() => createBackup(db, enqueue, { trigger: 'manual', now: at('2026-01-01T00:00:05Z') })).toThrow(DomainError);
    completeBackup(db, row.id, 123);
    const second = createBackup(db, enqueue, { trigger: 'manual', now: at('2026-01-01T00:00:00.500Z') });
    // Same second: the name is taken, so the next free second is used.
    expect(second.filename).toBe('svc-backup-20260101-000001.tar.gz');
  });

  it('keeps the newest completed and the newest failed records, counted apart', () => {
    const db = memoryDb();
    for (let i = 0; i < 5; i++) {
      const r = insertWithFreeName(db, at(`2026-01-01T00:00:0${i}Z`), { status: 'running', trigger: 'scheduled' });
      if (i % 2 === 0) completeBackup(db, r.id, 10);
      else failBackup(db, r.id, 'boom');
    }
    const gone = beyondRetention(db, 2).map((r) => r.filename);
    // Completed: 00, 02, 04 -> 00 goes. Failed: 01, 03 -> none goes.
    expect(gone).toEqual(['svc-backup-20260101-000000.tar.gz']);
    expect(listBackups(db).map((r) => r.filename)[0]).toBe('svc-backup-20260101-000004.tar.gz');
  });
});
