// The preview sweep as the queue key `previews:sweep` (src/reconcilers/previews/reconciler.ts): a real
// `:memory:` database, the real webhook flow to make a preview, the real work queue on a fake clock. The
// preview outlives its TTL by less than an hour and the hourly pass removes it through the command.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { sendGithub } from '../../support/github-delivery.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { queueOf } from '../../support/queue.js';
import { createPreviewSweep, PREVIEW_SWEEP_MS } from '../../../src/reconcilers/previews/reconciler.js';
import { allPreviews } from '../../../src/store/previews.js';
import { getAppByName, listAppViews as listApps } from '../../../src/store/apps.js';
import { Bus } from '../../../src/events/bus.js';
import { silentLogger } from '../../../src/log.js';

const SECRET = 'pr-secret-for-tests';
let t: TestApi;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_PREVIEW_PORTS: '21000-21009' } });
  await t.login();
});

async function preview(ttlDays: number) {
  const res = await t.request('POST', '/api/apps', { name: 'web', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', fallback_port: 18080, previews: { enabled: true, ttl_days: ttlDays } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const body = { action: 'opened', number: 5, repository: { full_name: 'acme/web' }, pull_request: { merged: false, head: { sha: 'a'.repeat(40), ref: 'feature-5', repo: { full_name: 'acme/web' } }, base: { ref: 'main' } } };
  expect((await sendGithub(t, SECRET, 'pull_request', body)).status).toBe(202);
  expect(getAppByName(t.db, 'web-pr-5')).toBeDefined();
}

describe('previews:sweep', () => {
  it('runs at start, then hourly; the first pass after ttl_days removes the preview through the command', async () => {
    await preview(1);
    // The sweep's clock starts where the API's stood when the preview's commit was recorded, half an hour later.
    const clock = createFakeClock(t.clock.now().getTime() + 30 * 60_000);
    const ctx = { db: t.db, sealer: t.sealer, config: t.config, enqueue: t.enqueue, bus: new Bus(), log: silentLogger, now: () => new Date(clock.now()) };
    const q = queueOf(clock, createPreviewSweep(ctx, clock));
    try {
      await q.start();
      await clock.advance(0);
      expect(q.passes).toEqual(['previews:sweep']);
      expect(getAppByName(t.db, 'web-pr-5')).toBeDefined();
      await clock.advance(23 * PREVIEW_SWEEP_MS); // 23.5 h after the commit: still fresh
      expect(q.passes).toHaveLength(24);
      expect(getAppByName(t.db, 'web-pr-5')).toBeDefined();
      q.add('previews:sweep'); // the resync, 24 h after the commit: not the sweep's time yet
      await clock.advance(0);
      expect(getAppByName(t.db, 'web-pr-5')).toBeDefined();
      await clock.advance(PREVIEW_SWEEP_MS); // 24.5 h
      expect(getAppByName(t.db, 'web-pr-5')).toBeUndefined();
      expect(allPreviews(t.db)).toEqual([]);
      expect(t.enqueue.keys).toContain('app:web-pr-5'); // the delete command announced it

      // Reconciling again changes nothing.
      const before = { apps: listApps(t.db), keys: t.enqueue.keys.length };
      await clock.advance(PREVIEW_SWEEP_MS);
      expect({ apps: listApps(t.db), keys: t.enqueue.keys.length }).toEqual(before);
      expect(clock.pending()).toBe(1);
    } finally {
      await q.stop();
    }
  });
});
