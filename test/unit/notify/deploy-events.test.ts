// Deploy outcomes through the real app reconciler (fake engine and clock, real SQLite): a failed deploy, a
// rollback before the switch and a flip-back after it each queue exactly one message, naming the app and
// linking to the deploy; a successful deploy queues none.
import { describe, expect, it } from 'vitest';
import { AppHarness, APP_SETTINGS } from '../../support/app-harness.js';
import { commandCtx } from '../../support/commands.js';
import { createChannel } from '../../../src/desired/notify.js';
import { getOutbox, listOutbox } from '../../../src/store/notify.js';

function harness(watchMs = 0) {
  const h = new AppHarness({ ...APP_SETTINGS, watchMs });
  createChannel(commandCtx(h.db, { sealer: h.sealer }), { name: 'ops', type: 'slack', config: { url: 'http://127.0.0.1:9/x' } }, 'api');
  return h;
}
const queued = (h: AppHarness) =>
  listOutbox(h.db)
    .reverse()
    .map((m) => ({ event: m.event, subject: m.subject, link: getOutbox(h.db, m.id)!.link, message: getOutbox(h.db, m.id)!.message }));

describe('deploy notifications', () => {
  it('success says nothing; a container that exits before it is healthy is one deploy_auto_rollback', async () => {
    const h = harness();
    await h.deployed('web:1');
    expect(queued(h)).toEqual([]);
    const d = h.deploy('web:exits');
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'auto_rollback' });
    await h.drive();
    expect(queued(h)).toEqual([
      { event: 'deploy_auto_rollback', subject: `web: deploy ${d.id} rolled back (health_check)`, link: `/deploys/${d.id}`, message: expect.stringMatching(/exited with code 1 before it became healthy.*the previous version keeps serving/) },
    ]);
    await h.expectSteady();
  });

  it('a deploy that fails at a step is one deploy_failed', async () => {
    const h = harness();
    h.makeApp('web', { imageRef: null });
    const d = h.deploy(null);
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'failed' });
    expect(queued(h)).toEqual([{ event: 'deploy_failed', subject: `web: deploy ${d.id} failed at validate`, link: `/deploys/${d.id}`, message: expect.stringMatching(/^no image to deploy/) }]);
  });

  it('a flip-back in the watch window is one deploy_flip_back, not a second message when the deploy ends auto_rollback', async () => {
    const h = harness(60_000);
    await h.deployed('web:1');
    const second = await h.deployed('web:2');
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id).status).toBe('auto_rollback');
    expect(queued(h)).toEqual([
      {
        event: 'deploy_flip_back',
        subject: `web: deploy ${second.id} failed after the switch; traffic went back to the previous version`,
        link: `/deploys/${second.id}`,
        message: 'svc-web-2 failed in the watch window (svc-web-2 exited with code 1); svc-web-1 serves again.',
      },
    ]);
    await h.expectSteady();
  });
});
