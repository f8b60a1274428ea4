import { describe, it, expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { createApp, deleteApp } from '../../support/commands.js';
import { dropInstances, observeApp, observeInstance, readInstances } from '../../../src/observed/apps.js';
import { dnsRecordsOf } from '../../../src/reconcilers/proxy/dns-sync.js';
import { appInstances } from '../../../src/store/schema/index.js';

describe('app_instances (replicas beyond the first)', () => {
  it('writes only differences, and the DNS answer holds every live replica', () => {
    const db = memoryDb();
    const app = createApp(db, recordingEnqueue(), { name: 'web', fallbackPort: 8080, replicas: 3 }, 'rest');
    observeApp(db, app.id, { liveAddress: '172.30.0.2', liveContainerName: 'svc-web-1' });
    expect(dnsRecordsOf(db)).toEqual({ 'web.svc.internal.': '172.30.0.2' });
    expect(observeInstance(db, app.id, 1, { deployId: 1, containerName: 'svc-web-1-r1', address: '172.30.0.4' })).toBe(true);
    expect(observeInstance(db, app.id, 2, { deployId: 1, containerName: 'svc-web-1-r2', address: '172.30.0.3' })).toBe(true);
    const stamp = db.select().from(appInstances).where(eq(appInstances.slot, 1)).get()!.updatedAt;
    // The same facts again: no write (rule 7).
    expect(observeInstance(db, app.id, 1, { deployId: 1, containerName: 'svc-web-1-r1', address: '172.30.0.4' })).toBe(false);
    expect(db.select().from(appInstances).where(eq(appInstances.slot, 1)).get()!.updatedAt).toBe(stamp);
    expect(dnsRecordsOf(db)).toEqual({ 'web.svc.internal.': ['172.30.0.2', '172.30.0.3', '172.30.0.4'] });
    // A stopped replica leaves the answer; a dropped one too.
    expect(observeInstance(db, app.id, 2, { address: null })).toBe(true);
    expect(dnsRecordsOf(db)).toEqual({ 'web.svc.internal.': ['172.30.0.2', '172.30.0.4'] });
    expect(dropInstances(db, app.id, 1)).toBe(true);
    expect(dropInstances(db, app.id, 1)).toBe(false);
    expect(readInstances(db, app.id)).toEqual([]);
    expect(dnsRecordsOf(db)).toEqual({ 'web.svc.internal.': '172.30.0.2' });
  });

  it('a new slot needs its deploy and container; an app deleted meanwhile is skipped; delete cascades', () => {
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const app = createApp(db, enqueue, { name: 'web', fallbackPort: 8080 }, 'rest');
    expect(() => observeInstance(db, app.id, 1, { address: '172.30.0.9' })).toThrow(/needs a deploy/);
    observeInstance(db, app.id, 1, { deployId: 1, containerName: 'svc-web-1-r1' });
    deleteApp(db, enqueue, app.id);
    expect(db.select().from(appInstances).all()).toEqual([]);
    expect(observeInstance(db, app.id, 1, { deployId: 1, containerName: 'svc-web-1-r1' })).toBe(false);
  });
});
