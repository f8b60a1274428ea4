import { describe, expect, it } from 'vitest';
import { MAX_RETRY_MS, planUpload, retryDelayMs } from '../../../src/reconcilers/offsite/plan.js';
import { beyondRemoteRetention } from '../../../src/offsite/remote.js';
import { objectKey, REMOTE_NAME, storeReason } from '../../../src/offsite/s3.js';

const now = Date.parse('2026-11-25T01:00:00Z');

describe('offsite plan', () => {
  it.each([
    [{ status: 'pending', nextAttemptAt: null }, { action: 'copy' }],
    [{ status: 'uploading', nextAttemptAt: null }, { action: 'copy' }],
    [{ status: 'verified', nextAttemptAt: null }, { action: 'none' }],
    [{ status: 'removed', nextAttemptAt: null }, { action: 'none' }],
    [{ status: 'failed', nextAttemptAt: '2026-11-25T01:00:30Z' }, { action: 'wait', inMs: 30_000 }],
    [{ status: 'failed', nextAttemptAt: '2026-11-25T00:59:59Z' }, { action: 'copy' }],
    [{ status: 'failed', nextAttemptAt: null }, { action: 'copy' }],
  ] as const)('%j -> %j', (row, plan) => {
    expect(planUpload(row, now)).toEqual(plan);
  });

  it('doubles the retry delay from the base up to 6 hours, never giving up', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 60))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(40, 60)).toBe(MAX_RETRY_MS);
    expect(retryDelayMs(0, 1)).toBe(1000);
  });

  it('keeps the newest copies by name and deletes the rest; never fewer than one', () => {
    const copies = ['c', 'b', 'a'].map((x) => ({ key: x, filename: x, size: 1, lastModified: null }));
    expect(beyondRemoteRetention(copies, 2).map((c) => c.key)).toEqual(['a']);
    expect(beyondRemoteRetention(copies, 0).map((c) => c.key)).toEqual(['b', 'a']);
  });

  it('names copies after the archive and recognises only its own names', () => {
    expect(objectKey('svc/', 'svc-backup-20261125-010000.tar.gz')).toBe('svc/svc-backup-20261125-010000.tar.gz.age');
    expect(REMOTE_NAME.test('svc-backup-20261125-010000.tar.gz.age')).toBe(true);
    expect(REMOTE_NAME.test('svc-backup-20261125-010000.tar.gz')).toBe(false);
    expect(REMOTE_NAME.test('other/svc-backup-20261125-010000.tar.gz.age')).toBe(false);
  });

  it("says a store's failure with its code and status, or the network error", () => {
    const sdk = Object.assign(new Error('The specified bucket does not exist'), { name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } });
    expect(storeReason(sdk)).toBe('NoSuchBucket (HTTP 404): The specified bucket does not exist');
    const head = Object.assign(new Error('UnknownError'), { name: '403', $metadata: { httpStatusCode: 403 } });
    expect(storeReason(head)).toBe('403 (HTTP 403): access denied');
    const net = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', name: 'Error' });
    expect(storeReason(net)).toBe('Error: connect ECONNREFUSED 127.0.0.1:9');
  });
});
