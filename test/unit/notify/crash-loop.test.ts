// A crash loop through the real app reconciler (fake engine, fake clock, real SQLite) and the real
// dispatcher to a loopback receiver: one alert, then one recovery; a relapse within 15 minutes says nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { AppHarness } from '../../support/app-harness.js';
import { commandCtx } from '../../support/commands.js';
import { startHttpReceiver, type HttpReceiver } from '../../support/notify-receivers.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger } from '../../../src/log.js';
import { createChannel } from '../../../src/desired/notify.js';
import { runDispatcher, type RunningDispatcher as Dispatcher } from '../../support/dispatcher.js';
import { listOutbox } from '../../../src/store/notify.js';

let rx: HttpReceiver | undefined;
let dispatcher: Dispatcher | undefined;
afterEach(async () => {
  await dispatcher?.stop();
  await rx?.close();
});

/** Crashes the live container `times` times, each right after its restart (never 10 s up). */
async function crash(h: AppHarness, times: number) {
  for (let i = 0; i < times; i++) {
    h.rt.kill('svc-web-1');
    await h.drive('web', { until: () => h.rt.containers.get('svc-web-1')?.state === 'running' });
  }
}

describe('crash loop notifications', () => {
  it('one alert per loop, then one recovery; a relapse within 15 minutes is held back', async () => {
    const h = new AppHarness();
    rx = await startHttpReceiver();
    createChannel(commandCtx(h.db, { sealer: h.sealer }), { name: 'chat', type: 'slack', events: ['app_crashing', 'app_recovered'], config: { url: rx.url + '/hook' } }, 'api');
    await h.deployed();

    await crash(h, 6);
    expect(h.app().healFailures).toBe(6);
    expect(listOutbox(h.db).map((r) => r.event)).toEqual(['app_crashing']);

    await h.drive(); // stays up 10 s: the counter resets
    expect(h.app().healFailures).toBe(0);
    expect(listOutbox(h.db).map((r) => r.event)).toEqual(['app_recovered', 'app_crashing']);
    await h.expectSteady();

    await crash(h, 4); // relapse minutes after the alert
    await h.drive();
    expect(listOutbox(h.db)).toHaveLength(2);

    dispatcher = runDispatcher({ db: h.db, bus: h.bus, sealer: h.sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com', pollMs: 10, quietMs: 10 });
    await waitFor(() => rx!.requests.length === 2 && listOutbox(h.db).every((r) => r.status === 'delivered'), { what: 'two messages' });
    const texts = rx.requests.map((r) => JSON.parse(r.body).text as string);
    expect(texts[0]).toMatch(/^web keeps crashing\nThe live container svc-web-1 stopped 3 times in a row/);
    expect(texts[0]).toContain(`https://svc.example.com/apps/${h.app().id}`);
    expect(texts[1]).toMatch(/^web recovered/);
  });

  it('after the window a new loop alerts again', async () => {
    const h = new AppHarness();
    createChannel(commandCtx(h.db, { sealer: h.sealer }), { name: 'chat', type: 'discord', config: { url: 'http://127.0.0.1:9/none' } }, 'api');
    await h.deployed();
    await crash(h, 3);
    await h.drive();
    h.now += 16 * 60_000;
    await crash(h, 3);
    expect(listOutbox(h.db).map((r) => r.event)).toEqual(['app_crashing', 'app_recovered', 'app_crashing']);
  });
});
