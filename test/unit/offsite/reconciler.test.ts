// The offsite reconciler on a :memory: database with a fake copy (the real one is exercised against the S3
// stand-in in test/integration/offsite.test.ts): a failure is recorded with the reason and its next
// attempt and announced once, a retry before its time waits, the recovery is announced, and a settled
// row is left alone (reconciling again changes nothing).
import { describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { Bus } from '../../../src/controller/bus.js';
import { createLogger } from '../../../src/log.js';
import { createOffsiteReconciler } from '../../../src/reconcilers/offsite/reconciler.js';
import { CopyError, type CopyInput } from '../../../src/offsite/copy.js';
import type { OffsiteEvent } from '../../../src/offsite/alerts.js';
import { completeBackup, createBackup } from '../../../src/store/backups.js';
import { getUpload, insertUploads } from '../../../src/store/offsite.js';
import { objectKey } from '../../../src/offsite/s3.js';
import { createTarget, uploadNow } from '../../../src/desired/backup-targets.js';
import { parseConfig } from '../../../src/config.js';
import { createChannel } from '../../../src/desired/notify.js';
import { notifyOutbox } from '../../../src/store/schema/index.js';
import { memoryDb, recordingEnqueue, testKey, testSealer } from '../../support/db.js';
import { remoteFields } from '../../../src/presenters/backups.js';

function setup(outcomes: (string | undefined)[]) {
  const db = memoryDb();
  const sealer = testSealer();
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('debug', {}, (l) => lines.push(JSON.parse(l)));
  const bus = new Bus();
  const events: OffsiteEvent[] = [];
  bus.on('offsite', (e) => events.push(e));
  let now = Date.parse('2026-11-25T01:00:00Z');
  const calls: CopyInput[] = [];
  const warms: unknown[] = [];
  const config = parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64') });
  const enqueue = recordingEnqueue();
  const target = createTarget({ db, sealer, log, enqueue, config }, { name: 'bucket-a', endpoint: 'http://127.0.0.1:9', region: 'garage', bucket: 'svc-a', prefix: 'svc/', access_key: 'AK', secret_key: 'SECRET-XYZ' }, 'api');
  // A channel that chose the upload events: the alerts reach its outbox.
  createChannel({ db, sealer, log, enqueue, config, bus, now: () => new Date(now) }, { name: 'ops', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' }, events: ['backup_upload_failed', 'backup_upload_recovered'] }, 'api');
  const backup = completeBackup(db, createBackup(db, undefined, { trigger: 'manual', now: new Date(now) }).id, 10)!;
  const [upload] = insertUploads(db, backup.id, backup.filename, objectKey);
  const r = createOffsiteReconciler({
    db,
    sealer,
    log,
    bus,
    now: () => now,
    backupDir: '/nowhere',
    settings: { age: { passphrase: 'pw' }, retainCount: 3, retrySeconds: 60 },
    clientFor: () => ({ destroy() {} }) as unknown as S3Client,
    warm: async (age) => void warms.push(age),
    async copy(i) {
      calls.push(i);
      const fail = outcomes.shift();
      if (fail) throw new CopyError(fail);
      return { sha256: 'ab'.repeat(32), size: 42, verifiedBy: 'read_back' as const, pruned: [] };
    },
  });
  return { db, r, events, lines, calls, warms, enqueue, upload, backup, target, advance: (ms: number) => (now += ms), ctx: { db, sealer, log, enqueue, config } };
}

describe('offsite reconciler', () => {
  it('records a failure with the store reason and backoff, announces it once, then the recovery', async () => {
    const s = setup(['upload: NoSuchBucket (HTTP 404): gone', 'upload: still gone']);
    expect(await s.r.listNames()).toEqual(['warm', String(s.upload.id)]);
    expect(await s.r.reconcile(String(s.upload.id))).toEqual({ requeueAfterMs: 60_000 });
    expect(getUpload(s.db, s.upload.id)).toMatchObject({ status: 'failed', attempts: 1, error: 'upload: NoSuchBucket (HTTP 404): gone' });
    expect(remoteFields(s.db, s.backup.id)).toMatchObject({ remote: null, remote_status: 'remote_failed' });
    expect(s.calls[0]).toMatchObject({ bucket: 'svc-a', key: `svc/${s.backup.filename}.age`, retain: 3 });
    expect(s.events).toEqual([expect.objectContaining({ type: 'backup.upload_failed', backup_id: s.backup.id, target: 'bucket-a', attempts: 1 })]);

    // Before its time a pass only waits.
    s.advance(30_000);
    expect(await s.r.reconcile(String(s.upload.id))).toEqual({ requeueAfterMs: 30_000 });
    expect(s.calls).toHaveLength(1);

    s.advance(30_000);
    expect(await s.r.reconcile(String(s.upload.id))).toEqual({ requeueAfterMs: 120_000 });
    expect(s.events).toHaveLength(1); // still failing: no second alert

    s.advance(120_000);
    expect(await s.r.reconcile(String(s.upload.id))).toEqual({});
    expect(getUpload(s.db, s.upload.id)).toMatchObject({ status: 'verified', attempts: 3, sha256: 'ab'.repeat(32), error: null });
    expect(remoteFields(s.db, s.backup.id)).toMatchObject({ remote_status: 'verified', remote: { target: 'bucket-a', key: `svc/${s.backup.filename}.age` } });
    expect(s.events.map((e) => e.type)).toEqual(['backup.upload_failed', 'backup.upload_recovered']);
    // One notification per transition, naming the backup and the target, without the store's credentials.
    const outbox = s.db.select().from(notifyOutbox).all();
    expect(outbox.map((m) => m.event)).toEqual(['backup_upload_failed', 'backup_upload_recovered']);
    expect(outbox[0].subject).toBe(`backup ${s.backup.filename}: off-host copy to bucket-a failed`);
    expect(outbox[0].message).toContain('NoSuchBucket');
    expect(JSON.stringify(outbox)).not.toContain('SECRET-XYZ');

    // Settled: reconciling again changes nothing.
    const before = getUpload(s.db, s.upload.id);
    expect(await s.r.reconcile(String(s.upload.id))).toEqual({});
    expect(getUpload(s.db, s.upload.id)).toEqual(before);
    expect(await s.r.listNames()).toEqual(['warm']);
    expect(JSON.stringify(s.lines)).not.toContain('SECRET-XYZ');
  });

  it('loads what copies need (warm) while a target exists: at start (listed) and when one is created (enqueued)', async () => {
    const s = setup([]);
    expect(s.enqueue.keys).toContain('offsite:warm');
    expect(await s.r.reconcile('warm')).toEqual({});
    expect(s.warms).toEqual([{ passphrase: 'pw' }]);
    s.db.$client.prepare('DELETE FROM backup_targets').run();
    expect(await s.r.listNames()).toEqual([]);
    expect(await s.r.reconcile('warm')).toEqual({});
    expect(s.warms).toHaveLength(1); // no target: nothing loaded
  });

  it('a row left `uploading` by a dead daemon is copied again', async () => {
    const s = setup([]);
    s.db.$client.prepare("UPDATE backup_uploads SET status = 'uploading', attempts = 1").run();
    expect(await s.r.listNames()).toEqual(['warm', String(s.upload.id)]);
    await s.r.reconcile(String(s.upload.id));
    expect(getUpload(s.db, s.upload.id)).toMatchObject({ status: 'verified', attempts: 2 });
  });

  it('upload now resets a failed row and enqueues it; refuses a running backup', async () => {
    const s = setup(['upload: down']);
    await s.r.reconcile(String(s.upload.id));
    const rows = uploadNow(s.ctx, s.backup.id, 'api');
    expect(rows[0]).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(s.ctx.enqueue.keys).toContain(`offsite:${s.upload.id}`);
    const running = createBackup(s.db, undefined, { trigger: 'manual', now: new Date('2026-11-25T02:00:00Z') });
    expect(() => uploadNow(s.ctx, running.id, 'api')).toThrow(/only a completed backup/);
  });
});
