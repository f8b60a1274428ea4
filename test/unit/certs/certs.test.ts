// Certificate failures from Caddy's TLS log (lines as Caddy 2.6.2 writes them): parsing, following the
// file across a roll, and the watcher against a real :memory: store: the app's certificate_error and its
// page, one `certificate_failed` per domain however often Caddy retries, one `certificate_recovered`.
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileTail } from '../../../src/certs/tail.js';
import { parseTlsLogLine } from '../../../src/certs/tls-log.js';
import { watchCertificates } from '../../../src/certs/watch.js';
import { silentLogger } from '../../../src/log.js';
import { Bus } from '../../../src/events/bus.js';
import { notifyOutbox } from '../../../src/store/schema/index.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient } from '../ui/form-client.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { queueOf } from '../../support/queue.js';
import { waitFor } from '../../support/wait.js';

const failed = (domain: string, ts = 1795579722.9) =>
  JSON.stringify({ level: 'error', ts, logger: 'tls.obtain', msg: 'could not get certificate from issuer', identifier: domain, issuer: '127.0.0.1:9-directory', error: 'registering account [] with server: provisioning client: performing request: Get "http://127.0.0.1:9/directory": dial tcp 127.0.0.1:9: connect: connection refused' });
const retry = (domain: string) => JSON.stringify({ level: 'error', ts: 1795579722.91, logger: 'tls.obtain', msg: 'will retry', error: `[${domain}] Obtain: ...`, attempt: 1, retrying_in: 60 });
const obtained = (domain: string) => JSON.stringify({ level: 'info', ts: 1795579800.1, logger: 'tls.obtain', msg: 'certificate obtained successfully', identifier: domain });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-certs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Caddy TLS log lines', () => {
  it('reads a failure and a success, and nothing from retries, locks, other loggers or torn lines', () => {
    expect(parseTlsLogLine(failed('App.Example.com'))).toEqual({ kind: 'failed', domain: 'app.example.com', error: expect.stringContaining('connection refused'), atMs: 1795579722900 });
    expect(parseTlsLogLine(obtained('a.example'))).toMatchObject({ kind: 'obtained', domain: 'a.example' });
    expect(parseTlsLogLine(retry('a.example'))).toBeUndefined();
    expect(parseTlsLogLine(JSON.stringify({ level: 'info', logger: 'tls.obtain', msg: 'acquiring lock', identifier: 'a.example' }))).toBeUndefined();
    expect(parseTlsLogLine(JSON.stringify({ level: 'error', logger: 'http.log', msg: 'could not get certificate from issuer', identifier: 'a.example' }))).toBeUndefined();
    expect(parseTlsLogLine('{"level":"error","logger":"tls.obt')).toBeUndefined();
    expect(parseTlsLogLine('not json')).toBeUndefined();
  });

  it('follows a file: complete lines only, and from the start again after Caddy rolls it', async () => {
    const f = join(dir, 'tls.log');
    const tail = fileTail(f);
    expect(await tail.read()).toEqual([]); // not there yet
    await writeFile(f, 'one\ntw');
    expect(await tail.read()).toEqual(['one']);
    await appendFile(f, 'o\n');
    expect(await tail.read()).toEqual(['two']);
    await rm(f);
    await writeFile(f, 'three\n'); // rolled: a new, shorter file
    expect(await tail.read()).toEqual(['three']);
  });
});

describe('certificate watcher', () => {
  let t: TestApi;
  let appId: number;
  let cookie: string;
  const file = () => join(dir, 'svc-tls.log');
  const outbox = () => t.db.select().from(notifyOutbox).all().map((m) => `${m.event}: ${m.subject}`);
  beforeEach(async () => {
    t = createTestApi();
    cookie = (await t.login()).cookie;
    appId = (await t.request('POST', '/api/apps', { name: 'shop', image_ref: 'svc-test/web:v1', access_mode: 'domain', domain: 'shop.example.com' })).body.id;
    expect((await t.request('POST', '/api/notifications/channels', { name: 'ops', type: 'webhook', events: ['certificate_failed', 'certificate_recovered'], config: { url: 'http://127.0.0.1:9/hook' } })).status).toBe(201);
  });

  it('records the failure on the app and its page, alerts once however often Caddy retries, then once on recovery', async () => {
    await writeFile(file(), [failed('other.example.org'), failed('shop.example.com'), retry('shop.example.com')].join('\n') + '\n');
    const w = watchCertificates({ db: t.db, bus: new Bus(), file: file(), log: silentLogger });
    await w.pass();
    const app = (await t.request('GET', `/api/apps/${appId}`)).body;
    expect(app.certificate_error).toContain('connection refused');
    expect(outbox()).toEqual(['certificate_failed: shop: no certificate for shop.example.com']); // not the foreign domain
    const b = formClient(t.app);
    b.jar.set('session', cookie);
    expect((await b.get(`/apps/${appId}`)).html).toMatch(/class="status-line warn"[^>]*>[^<]*no certificate: registering account/);

    await appendFile(file(), [failed('shop.example.com', 1795579790), retry('shop.example.com'), failed('shop.example.com', 1795579900)].join('\n') + '\n');
    await w.pass();
    expect(outbox()).toHaveLength(1); // Caddy's retries say nothing more

    await appendFile(file(), obtained('shop.example.com') + '\n');
    await w.pass();
    expect((await t.request('GET', `/api/apps/${appId}`)).body.certificate_error).toBeNull();
    expect(outbox()).toEqual(['certificate_failed: shop: no certificate for shop.example.com', 'certificate_recovered: shop: certificate for shop.example.com issued']);
    await w.pass(); // nothing new: nothing changes
    expect(outbox()).toHaveLength(2);
  });

  it('a restarted daemon reads the whole file again and announces nothing twice', async () => {
    await writeFile(file(), failed('shop.example.com') + '\n');
    const first = watchCertificates({ db: t.db, bus: new Bus(), file: file(), log: silentLogger });
    await first.pass();
    const second = watchCertificates({ db: t.db, bus: new Bus(), file: file(), log: silentLogger });
    await second.pass();
    expect(outbox()).toHaveLength(1);
    expect((await t.request('GET', `/api/apps/${appId}`)).body.certificate_error).toContain('connection refused');
  });

  it('runs as the queue key certs:watch: a pass at start, then every 3 s, with no timer of its own', async () => {
    const clock = createFakeClock();
    const q = queueOf(clock, watchCertificates({ db: t.db, bus: new Bus(), file: file(), log: silentLogger, clock }));
    // A pass reads the file (real I/O): wait until it returned and its requeue is the one timer.
    const passed = (n: number) => waitFor(() => q.passes.length === n && q.stats().running === 0 && clock.pending() === 1, { what: `pass ${n}` });
    try {
      await writeFile(file(), '');
      await q.start();
      await clock.advance(0);
      await passed(1);
      expect(clock.nextIn()).toBe(3_000);
      await appendFile(file(), failed('shop.example.com') + '\n');
      await clock.advance(2_999);
      expect(q.passes).toHaveLength(1);
      await clock.advance(1);
      await passed(2);
      expect(outbox()).toEqual(['certificate_failed: shop: no certificate for shop.example.com']);
      // Reconciling again: nothing new in the log, nothing changes.
      await clock.advance(3_000);
      await passed(3);
      expect(outbox()).toHaveLength(1);
      expect((await t.request('GET', `/api/apps/${appId}`)).body.certificate_error).toContain('connection refused');
    } finally {
      await q.stop();
    }
  });
});
