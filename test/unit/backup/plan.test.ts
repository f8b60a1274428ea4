import { describe, expect, it } from 'vitest';
import { BUSY_RETRY_MS, planSchedule, strayFiles } from '../../../src/reconcilers/backup/plan.js';
import { BACKUP_FILENAME } from '../../../src/store/backups.js';

const MIN = 60_000;

describe('planSchedule', () => {
  const base = { now: 100 * MIN, intervalMinutes: 60, lastScheduledAt: undefined as number | undefined, running: false };
  it.each([
    ['off when the interval is 0', { ...base, intervalMinutes: 0 }, { action: 'off' }],
    ['waits one interval after the first look', base, { action: 'wait', inMs: 60 * MIN }],
    ['waits for the rest of the interval since the last scheduled one', { ...base, lastScheduledAt: 70 * MIN }, { action: 'wait', inMs: 30 * MIN }],
    ['creates when due', { ...base, lastScheduledAt: 40 * MIN }, { action: 'create', nextInMs: 60 * MIN }],
    ['creates when long overdue (a restart after downtime fires once)', { ...base, lastScheduledAt: 0 }, { action: 'create', nextInMs: 60 * MIN }],
    ['retries shortly when another backup runs', { ...base, lastScheduledAt: 0, running: true }, { action: 'busy', retryInMs: BUSY_RETRY_MS }],
  ])('%s', (_, input, want) => {
    expect(planSchedule(input, 100 * MIN)).toEqual(want);
  });
});

describe('strayFiles', () => {
  const isArchive = (f: string) => BACKUP_FILENAME.test(f);
  const files = ['svc-backup-20260101-000000.tar.gz', 'svc-backup-20260101-000001.tar.gz', '.svc-backup-20260101-000002.tar.gz.partial', '.staging-abc', 'notes.txt'];
  it('removes unrecorded archives, never work files or other files', () => {
    const recorded = new Set(['svc-backup-20260101-000000.tar.gz']);
    expect(strayFiles(files, recorded, isArchive)).toEqual(['svc-backup-20260101-000001.tar.gz']);
  });
});
