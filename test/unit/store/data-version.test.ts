// The database's version (src/store/data-version.ts): what lets an idle proxy pass, DNS sync and outbox poll
// skip their reads. It must move on every write, through this connection or another, and never on a read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataVersion, whenChanged } from '../../../src/store/data-version.js';
import { openDb } from '../../../src/store/db.js';
import { apps } from '../../../src/store/schema/index.js';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { createApp } from '../../support/commands.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('dataVersion', () => {
  it('stays while only reads happen; moves on an insert, an update and a delete', () => {
    const db = memoryDb();
    const v = dataVersion(db);
    const a = v();
    db.select().from(apps).all();
    expect(v()).toBe(a);
    createApp(db, recordingEnqueue(), { name: 'web', fallbackPort: 8080 }, 'rest');
    const b = v();
    expect(b).not.toBe(a);
    db.update(apps).set({ fallbackPort: 8081 }).run();
    const c = v();
    expect(c).not.toBe(b);
    db.delete(apps).run();
    expect(v()).not.toBe(c);
  });

  it('moves when another connection commits to the same file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-dv-'));
    dirs.push(dir);
    const one = openDb(join(dir, 'svc.db'));
    const two = openDb(join(dir, 'svc.db'));
    try {
      const v = dataVersion(one);
      const a = v();
      createApp(two, recordingEnqueue(), { name: 'web', fallbackPort: 8080 }, 'rest');
      expect(v()).not.toBe(a);
    } finally {
      one.$client.close();
      two.$client.close();
    }
  });

  it('whenChanged reads again only after a write', () => {
    const db = memoryDb();
    let reads = 0;
    const names = whenChanged(db, () => (reads++, db.select({ name: apps.name }).from(apps).all().map((r) => r.name)));
    expect(names()).toEqual([]);
    expect(names()).toEqual([]);
    expect(reads).toBe(1);
    createApp(db, recordingEnqueue(), { name: 'web', fallbackPort: 8080 }, 'rest');
    expect(names()).toEqual(['web']);
    expect(reads).toBe(2);
  });
});
