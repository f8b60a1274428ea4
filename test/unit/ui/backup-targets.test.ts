// The Backups page's off-host part through the real hono app and store: adding a target by form (refused
// fields re-render with the reason), the secret never in a page, a failed copy shown as `remote_failed`
// with the store's reason and a "Retry now" that requeues it, and the same target over REST.
import { beforeEach, describe, expect, it } from 'vitest';
import { completeBackup, createBackup } from '../../../src/store/backups.js';
import { insertUploads, listTargets, updateUpload } from '../../../src/store/offsite.js';
import { objectKey } from '../../../src/offsite/s3.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  t = createTestApi({ env: { SVC_BACKUP_PASSPHRASE: 'pw-not-shown' } });
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
});

const fields = { name: 'offsite', endpoint: 'http://127.0.0.1:9', region: 'garage', bucket: 'svc-backups', prefix: 'svc/', access_key: 'GKTESTKEY1', secret_key: 'do-not-show-this' };

describe('backup targets page', () => {
  it('adds a target by form, refuses a bad one with the reason, never shows the secret', async () => {
    const page = await b.get('/backups/targets');
    expect(page.html).toContain('No targets');
    expect(page.html).toContain('SVC_BACKUP_PASSPHRASE');
    expect(page.html).not.toContain('pw-not-shown');
    const bad = await b.post('/backups/targets', { ...fields, bucket: 'NO' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toMatch(/bucket/);
    const made = await b.post('/backups/targets', fields);
    expect(made.location).toBe('/backups/targets?m=target_created');
    const after = await b.follow(made);
    expect(after.html).toContain('svc-backups/svc/');
    expect(after.html).toContain('…KEY1');
    expect(after.html).not.toContain('do-not-show-this');
    const api = await t.request('GET', '/api/backup-targets');
    expect(api.body).toEqual([expect.objectContaining({ name: 'offsite', bucket: 'svc-backups', access_key_hint: '…KEY1' })]);
    expect(JSON.stringify(api.body)).not.toContain('do-not-show-this');
  });

  it('shows a failed copy as remote_failed with the reason, and "Retry now" requeues it', async () => {
    await b.get('/backups/targets');
    await b.post('/backups/targets', fields);
    const row = completeBackup(t.db, createBackup(t.db, undefined, { trigger: 'manual', now: new Date('2026-11-25T01:00:00Z') }).id, 100)!;
    const [u] = insertUploads(t.db, row.id, row.filename, objectKey);
    updateUpload(t.db, u.id, { status: 'failed', attempts: 1, error: 'upload: NoSuchBucket (HTTP 404): gone', nextAttemptAt: '2026-11-25T02:00:00Z' });
    const page = await b.get('/backups');
    expect(page.html).toContain('data-remote-status="remote_failed"');
    expect(page.html).toContain('offsite: upload: NoSuchBucket (HTTP 404): gone');
    const api = await t.request('GET', `/api/backups/${row.id}`);
    expect(api.body).toMatchObject({ status: 'completed', remote: null, remote_status: 'remote_failed', remotes: [{ target: 'offsite', status: 'remote_failed', attempts: 1 }] });
    const retry = await b.post(`/backups/${row.id}/upload`);
    expect(retry.location).toBe('/backups?m=upload_queued');
    expect(t.enqueue.keys).toContain(`offsite:${u.id}`);
    expect(listTargets(t.db)).toHaveLength(1);
  });
});
