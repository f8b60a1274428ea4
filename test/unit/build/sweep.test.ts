import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { staleCheckouts, sweepCheckouts } from '../../../src/build/sweep.js';

import { deploys } from '../../../src/store/schema/index.js';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { createApp } from '../../support/commands.js';

let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('checkout sweep', () => {
  it('staleCheckouts keeps exactly the checkouts of deploys at clone or build', () => {
    expect(staleCheckouts(['web-3', 'web-4', 'api-1', 'junk'], [{ app: 'web', deployId: 4 }])).toEqual(['web-3', 'api-1', 'junk']);
    expect(staleCheckouts([], [{ app: 'web', deployId: 4 }])).toEqual([]);
  });

  it('removes the checkouts of deploys that ended, keeps the one being built, and tolerates no builds dir', async () => {
    const db = memoryDb();
    const app = createApp(db, recordingEnqueue(), { name: 'web', fallbackPort: 9000 }, 'rest');
    const at = (step: string | null, status: 'running' | 'cancelled') =>
      db.insert(deploys).values({ appId: app.id, trigger: 'webhook', status, step }).returning().get().id;
    const ended = at(null, 'cancelled'); // superseded between its clone and its build
    const building = at('build', 'running');
    dir = mkdtempSync(join(tmpdir(), 'svc-builds-'));
    await sweepCheckouts(db, join(dir, 'missing'), silentLogger);
    for (const id of [ended, building]) mkdirSync(join(dir, `web-${id}`));
    await sweepCheckouts(db, dir, silentLogger);
    expect(existsSync(join(dir, `web-${ended}`))).toBe(false);
    expect(existsSync(join(dir, `web-${building}`))).toBe(true);
  });
});
