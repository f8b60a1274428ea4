// The outbox end to end on a real `:memory:` SQLite and real loopback receivers (HTTP and SMTP): raise ->
// dispatcher -> provider, the delivery log, retries, a stop in the middle of a send, and the channel command.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { memoryDb, testSealer } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver } from '../../support/notify-receivers.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger } from '../../../src/log.js';
import { createChannel, deleteChannel, updateChannel } from '../../../src/desired/notify.js';
import { raise } from '../../../src/notify/raise.js';
import { Bus } from '../../../src/controller/bus.js';
import { runDispatcher, type RunningDispatcher as Dispatcher } from '../../support/dispatcher.js';
import { sendTest } from '../../../src/notify/test-send.js';
import { listDeliveries, listOutbox } from '../../../src/store/notify.js';
import { deliveryJson, outboxJson } from '../../../src/presenters/notify.js';
import { notifyChannels } from '../../../src/store/schema/index.js';
import { DomainError } from '../../../src/errors.js';

const db = memoryDb();
const sealer = testSealer();
const bus = new Bus();
const to = { db, bus };
const ctx = commandCtx(db, { sealer });
let rx: HttpReceiver;
/** How far the dispatcher's clock is ahead of the real one (retries are minutes apart). */
let ahead = 0;
const dispatchers: Dispatcher[] = [];
const dispatcher = () => {
  const d = runDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com', now: () => Date.now() + ahead, pollMs: 10, quietMs: 10 });
  dispatchers.push(d);
  return d;
};

beforeEach(async () => {
  rx = await startHttpReceiver();
  ahead = 0;
  db.delete(notifyChannels).run();
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  await rx.close();
});

const notice = (n = 1) => ({ event: 'deploy_failed' as const, subject: `web: deploy ${n} failed at pull`, message: 'image not found', link: `/deploys/${n}` });

describe('notifications: raise and deliver', () => {
  it('a webhook channel gets a signed Standard Webhooks message; the log shows the answer', async () => {
    const ch = createChannel(ctx, { name: 'hook', type: 'webhook', events: ['deploy_failed'], config: { url: `${rx.url}/in?token=abcd1234` } }, 'api');
    expect(ch.secret).toMatch(/^whsec_/);
    expect(ch.target).toBe(`${rx.url}/…`);
    const sealed = db.select().from(notifyChannels).get()!.configSealed;
    expect(sealed).not.toContain('abcd1234'); // sealed at rest
    expect(raise(to, notice())).toBe(1);
    dispatcher();
    await waitFor(() => rx.requests.length === 1, { what: 'the webhook' });
    const r = rx.requests[0];
    expect(r.path).toBe('/in?token=abcd1234');
    const payload = new Webhook(ch.secret!).verify(r.body, r.headers) as { type: string; data: { url: string; subject: string } };
    expect(payload).toMatchObject({ type: 'deploy_failed', data: { subject: 'web: deploy 1 failed at pull', url: 'https://svc.example.com/deploys/1' } });
    await waitFor(() => listOutbox(db).map(outboxJson)[0].status === 'delivered', { what: 'delivered' });
    expect(listDeliveries(db).map(deliveryJson)).toMatchObject([{ channel: 'hook', event: 'deploy_failed', ok: true, status: 200, answer: 'HTTP 200 OK: ok', attempt: 1 }]);
  });

  it('only channels that chose the event and are enabled get it', () => {
    createChannel(ctx, { name: 'a', type: 'slack', events: ['deploy_failed'], config: { url: rx.url + '/a' } }, 'api');
    createChannel(ctx, { name: 'b', type: 'discord', events: ['backup_failed'], config: { url: rx.url + '/b' } }, 'api');
    const c = createChannel(ctx, { name: 'c', type: 'ntfy', config: { url: rx.url + '/topic-1' } }, 'api'); // every event
    expect(raise(to, notice())).toBe(2);
    updateChannel(ctx, c.id, { enabled: false }, 'api');
    expect(raise(to, notice(2))).toBe(1);
  });

  it('a provider answering 500 is retried with backoff until it accepts', async () => {
    createChannel(ctx, { name: 'slack', type: 'slack', events: ['deploy_failed'], config: { url: rx.url + '/hooks/x' } }, 'api');
    let answers = [500];
    rx.answer = () => answers.shift() ?? 200;
    const raisedAt = Date.now();
    raise(to, notice(), raisedAt);
    dispatcher();
    await waitFor(() => listDeliveries(db).map(deliveryJson).length === 1, { what: 'the first attempt' });
    const [row] = listOutbox(db).map(outboxJson);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_answer: 'HTTP 500 Internal Server Error: receiver says no' });
    expect(Date.parse(row.next_at) - raisedAt).toBeGreaterThanOrEqual(4_000); // 5 s later, to the second
    expect(rx.requests).toHaveLength(1);
    ahead += 5_000;
    await waitFor(() => listOutbox(db).map(outboxJson)[0].status === 'delivered', { what: 'the retry' });
    expect(listDeliveries(db).map(deliveryJson).map((d) => [d.attempt, d.status])).toEqual([[2, 200], [1, 500]]);
    expect(JSON.parse(rx.requests[1].body).text).toContain('web: deploy 1 failed at pull');
    answers = [];
  });

  it('a dispatcher gone quiet on an empty outbox (it skips the query while nothing is written) still sends the next raise', async () => {
    createChannel(ctx, { name: 'hook', type: 'webhook', events: ['deploy_failed'], config: { url: `${rx.url}/quiet` } }, 'api');
    let looks = 0; // now() is asked on each quiet tick
    const d = runDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com', now: () => (looks++, Date.now()), pollMs: 5, quietMs: 5 });
    dispatchers.push(d);
    await waitFor(() => looks >= 5, { what: 'quiet ticks' });
    raise(to, notice(7));
    await waitFor(() => rx.requests.length === 1, { what: 'the message raised while quiet' });
    expect(rx.requests[0].path).toBe('/quiet');
  });

  it('an idle dispatcher looks at the outbox every quietMs only, and a raise in this process is sent at once', async () => {
    createChannel(ctx, { name: 'hook', type: 'webhook', events: ['deploy_failed'], config: { url: `${rx.url}/idle` } }, 'api');
    let looks = 0;
    const d = runDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com', now: () => (looks++, Date.now()), pollMs: 5, quietMs: 60_000 });
    dispatchers.push(d);
    await waitFor(() => looks >= 1, { what: 'the first look' });
    await new Promise((r) => setTimeout(r, 200)); // 40 looks at pollMs: the busy rate an idle daemon used to keep
    expect(looks).toBeLessThanOrEqual(3);
    raise(to, notice(8)); // no wake(): raise itself tells the dispatcher (the bus)
    await waitFor(() => rx.requests.length === 1, { timeoutMs: 2000, what: 'the raise sent without waiting out quietMs' });
    expect(rx.requests[0].path).toBe('/idle');
  });

  it('gives up after 24 hours: the message ends failed', async () => {
    createChannel(ctx, { name: 'down', type: 'discord', events: ['deploy_failed'], config: { url: rx.url + '/d' } }, 'api');
    rx.answer = () => 503;
    raise(to, notice());
    ahead += 24 * 3_600_000 - 2_000; // the message is nearly 24 h old at its first attempt
    dispatcher();
    await waitFor(() => listOutbox(db).map(outboxJson)[0].status === 'failed', { what: 'failed' });
    expect(listOutbox(db).map(outboxJson)[0].attempts).toBe(1);
  });

  it('a stop in the middle of a send leaves the message pending; the next daemon sends it with the same id', async () => {
    const { createServer } = await import('node:http');
    let arrived = 0;
    const hang = createServer(() => void arrived++); // takes the request, never answers
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const ch = createChannel(ctx, { name: 'hook', type: 'webhook', events: ['deploy_failed'], config: { url: `http://127.0.0.1:${(hang.address() as { port: number }).port}` } }, 'api');
    raise(to, notice());
    const first = dispatcher();
    await waitFor(() => arrived === 1, { what: 'a send in flight' });
    await first.stop();
    hang.closeAllConnections();
    hang.close();
    expect(listOutbox(db).map(outboxJson)[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect(listDeliveries(db).map(deliveryJson)).toEqual([]);
    updateChannel(ctx, ch.id, { config: { url: rx.url } }, 'api'); // a webhook keeps its secret
    dispatcher();
    await waitFor(() => listOutbox(db).map(outboxJson)[0].status === 'delivered', { what: 'sent after the restart' });
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0].headers['webhook-id']).toBe(listOutbox(db).map(outboxJson)[0].message_id);
    expect(new Webhook(ch.secret!).verify(rx.requests[0].body, rx.requests[0].headers)).toBeTruthy();
  });

  it('a channel deleted while its message is in flight: the late answer is dropped, the daemon goes on', async () => {
    const { createServer } = await import('node:http');
    const held: (() => void)[] = [];
    const slow = createServer((_req, res) => void held.push(() => res.end('ok')));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const ch = createChannel(ctx, { name: 'gone', type: 'slack', events: ['deploy_failed'], config: { url: `http://127.0.0.1:${(slow.address() as { port: number }).port}/x` } }, 'api');
    raise(to, notice());
    const logged: string[] = [];
    const d = runDispatcher({ db, bus, sealer, log: { ...silentLogger, error: (msg: string) => void logged.push(msg) } as typeof silentLogger, baseUrl: () => 'https://svc.example.com', pollMs: 10, quietMs: 10 });
    dispatchers.push(d);
    await waitFor(() => held.length === 1, { what: 'the send in flight' });
    deleteChannel(ctx, ch.id, 'api');
    held[0]();
    await waitFor(() => logged.length === 1, { what: 'the dropped answer logged' });
    expect(logged).toEqual(['notification delivery failed']);
    expect(listOutbox(db).map(outboxJson)).toEqual([]);
    slow.closeAllConnections();
    slow.close();
  });

  it('email through a real SMTP server: the mail arrives, the log shows the SMTP answer', async () => {
    const smtp = await startSmtpReceiver();
    try {
      const ch = createChannel(ctx, { name: 'mail', type: 'email', config: { host: '127.0.0.1', port: smtp.port, security: 'none', from: 'svc@example.com', to: ['ops@example.com'] } }, 'api');
      const answer = await sendTest({ db, sealer, baseUrl: 'https://svc.example.com' }, ch.id);
      expect(answer).toMatchObject({ ok: true, status: 250 });
      expect(answer.answer).toMatch(/^250 .*Message queued as test-1/);
      raise(to, { event: 'backup_failed', subject: 'backup b.tar.gz failed', message: 'disk full', link: '/backups' });
      dispatcher();
      await waitFor(() => smtp.mails.length === 2, { what: 'two mails' });
      expect(smtp.mails[1].to).toEqual(['ops@example.com']);
      expect(smtp.mails[1].data).toContain('Subject: [svc] backup b.tar.gz failed');
      expect(smtp.mails[1].data).toContain('https://svc.example.com/backups');
    } finally {
      await smtp.close();
    }
  });

  it('the test action shows the provider\'s real refusal', async () => {
    rx.answer = () => 404;
    const ch = createChannel(ctx, { name: 'hook', type: 'slack', config: { url: rx.url + '/services/T/B/SECRETPATH' } }, 'api');
    const answer = await sendTest({ db, sealer, baseUrl: 'https://svc.example.com' }, ch.id);
    expect(answer).toMatchObject({ ok: false, status: 404, answer: 'HTTP 404 Not Found: receiver says no' });
    expect(listDeliveries(db).map(deliveryJson)[0]).toMatchObject({ event: 'test', ok: false, status: 404 });
  });

  it('bad channel input is a 400 that names the field and stores nothing', () => {
    const bad = [
      { name: 'x', type: 'slack', config: { url: 'ftp://example.com' } },
      { name: 'x', type: 'webhook', config: { url: 'https://e.com', secret: 'nope' } },
      { name: 'x', type: 'email', config: { host: 'h; rm -rf /', from: 'a@b.co', to: ['c@d.co'] } },
      { name: 'x', type: 'slack', events: ['no_such_event'], config: { url: 'https://e.com' } },
      { name: 'X Y', type: 'slack', config: { url: 'https://e.com' } },
      { name: 'x', type: 'pager', config: {} },
    ];
    for (const input of bad) {
      expect(() => createChannel(ctx, input, 'api')).toThrow(DomainError);
    }
    expect(db.select().from(notifyChannels).all()).toEqual([]);
  });
});
