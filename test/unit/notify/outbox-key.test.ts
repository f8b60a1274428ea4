// The dispatcher as the queue key `notify:outbox` on a fake clock (real `:memory:` SQLite, a real loopback
// receiver): a failed send is requeued for the retry's due time, not polled for; the key comes back when
// that time comes, the message is delivered; then the pass only comes back after the quiet period.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryDb, testSealer } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { startHttpReceiver, type HttpReceiver } from '../../support/notify-receivers.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { queueOf } from '../../support/queue.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger } from '../../../src/log.js';
import { createChannel } from '../../../src/desired/notify.js';
import { raise } from '../../../src/notify/raise.js';
import { Bus } from '../../../src/controller/bus.js';
import { createDispatcher, QUIET_MS } from '../../../src/notify/dispatcher.js';
import { listDeliveries, listOutbox } from '../../../src/store/notify.js';
import { deliveryJson, outboxJson } from '../../../src/presenters/notify.js';

let rx: HttpReceiver;
beforeEach(async () => void (rx = await startHttpReceiver()));
afterEach(async () => rx.close());

describe('notify:outbox', () => {
  it('requeues itself at the retry time of a failed send, delivers then, and comes back after quietMs only', async () => {
    const db = memoryDb();
    const sealer = testSealer();
    const bus = new Bus();
    createChannel(commandCtx(db, { sealer }), { name: 'slack', type: 'slack', events: ['deploy_failed'], config: { url: rx.url + '/hooks/x' } }, 'api');
    const answers = [500];
    rx.answer = () => answers.shift() ?? 200;
    const clock = createFakeClock(Date.parse('2026-12-01T10:00:00Z'));
    let queue: ReturnType<typeof queueOf> | undefined;
    const dispatcher = createDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com', now: clock.now, enqueue: (k, o) => queue!.add(k, o) });
    const q = (queue = queueOf(clock, dispatcher));
    // A send is real I/O: wait until none is in flight, no pass runs and the requeue is the one timer.
    const calm = (what: string) => waitFor(() => q.stats().running + q.stats().queued === 0 && clock.pending() === 1, { what });
    try {
      raise({ db, bus }, { event: 'deploy_failed', subject: 'web: deploy 1 failed', message: 'image not found' }, clock.now());
      await q.start();
      await clock.advance(0);
      await waitFor(() => listDeliveries(db).map(deliveryJson).length === 1, { what: 'the first attempt' });
      await calm('the pass after the send');
      expect(listOutbox(db).map(outboxJson)[0]).toMatchObject({ status: 'pending', attempts: 1 });
      expect(clock.nextIn()).toBe(5_000); // the retry's due time (backoff.ts), not a poll
      await clock.advance(4_999);
      expect(rx.requests).toHaveLength(1);
      await clock.advance(1);
      await waitFor(() => listOutbox(db).map(outboxJson)[0].status === 'delivered', { what: 'the retry' });
      await calm('the pass after the retry');
      expect(clock.nextIn()).toBe(QUIET_MS); // nothing pending: the quiet look only

      // Reconciling again changes nothing: no send, no delivery row, the same quiet requeue.
      const passes = q.passes.length;
      await clock.advance(QUIET_MS);
      await calm('the quiet pass');
      expect(q.passes.length).toBe(passes + 1);
      expect(rx.requests).toHaveLength(2);
      expect(listDeliveries(db).map(deliveryJson).map((d) => [d.attempt, d.status])).toEqual([[2, 200], [1, 500]]);
      expect(clock.nextIn()).toBe(QUIET_MS);
    } finally {
      await q.stop();
      await dispatcher.stop();
    }
  });
});
