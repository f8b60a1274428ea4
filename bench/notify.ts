// Notification latency: an event raised (src/notify/raise.ts, as a reconciler calls it) to the message
// at a local receiver, through the daemon's own dispatcher (the key `notify:outbox` of a work queue) with its
// defaults (250 ms outbox poll, 4 sends at once) on a file-backed SQLite database in WAL mode, as the daemon opens it.
//  1. Spread: N events at random gaps (20-300 ms), one webhook channel (signed). Goal: p95 < 1 s.
//  2. Burst: B events at once to two channels (webhook + Slack-compatible): time to the last message.
//
//   npm run bench:notify -- [--events 200] [--burst 100]
//
// Traffic goes only to a loopback receiver; loops are bounded; the temp directory is removed at the end.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSealer } from '../src/crypto.js';
import { silentLogger, createLogger } from '../src/log.js';
import { openDb } from '../src/store/db.js';
import { Bus } from '../src/events/bus.js';
import { parseConfig } from '../src/config.js';
import { createChannel } from '../src/desired/notify.js';
import { runDispatcher } from '../test/support/dispatcher.js';
import { raise } from '../src/notify/raise.js';
import { listOutbox } from '../src/store/notify.js';
import { log, ms, numFlag, pct, runMain, sleep } from './common.js';

const EVENTS = numFlag('events', 200, 1, 2000);
const BURST = numFlag('burst', 100, 1, 1000);

runMain(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-notify-'));
  const arrived = new Map<string, number>();
  let requests = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const subject = /"(?:text|subject)":"([^"\\]+)/.exec(body)?.[1] ?? '';
      const key = `${req.url}|${subject.split('\\n')[0]}`;
      arrived.set(key, performance.now());
      requests++;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = Buffer.alloc(32, 3);
  const db = openDb(join(dir, 'svc.db'));
  const sealer = createSealer(key);
  const config = parseConfig({ SVC_ENCRYPTION_KEY: key.toString('base64'), SVC_DATA_DIR: dir }, join(dir, '.env'));
  const bus = new Bus();
  const ctx = { db, sealer, config, bus, enqueue: () => {}, log: createLogger('error', {}, () => {}), now: () => new Date() };
  const dispatcher = runDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com' });
  try {
    createChannel(ctx, { name: 'hook', type: 'webhook', events: ['deploy_failed'], config: { url: `${base}/hook` } }, 'api');

    const wait = async (keys: string[], maxMs: number) => {
      const end = performance.now() + maxMs;
      while (keys.some((k) => !arrived.has(k)) && performance.now() < end) await sleep(5);
    };

    // 1. Spread.
    const raisedAt = new Map<string, number>();
    for (let i = 0; i < EVENTS; i++) {
      const subject = `app${i}: deploy ${i} failed at pull`;
      raisedAt.set(`/hook|${subject}`, performance.now());
      raise({ db, bus }, { event: 'deploy_failed', subject, message: 'image not found', link: `/deploys/${i}` });
      await sleep(20 + Math.random() * 280);
    }
    await wait([...raisedAt.keys()], 30_000);
    const lat = [...raisedAt].map(([k, t]) => (arrived.get(k) ?? Infinity) - t);
    const lost = lat.filter((x) => !Number.isFinite(x)).length;
    log(`spread: ${EVENTS} events -> webhook: p50 ${ms(pct(lat, 50))}, p95 ${ms(pct(lat, 95))}, max ${ms(Math.max(...lat))}${lost ? `, ${lost} NOT ARRIVED` : ''} (goal p95 < 1 s)`);

    // 2. Burst to two channels.
    createChannel(ctx, { name: 'chat', type: 'slack', events: ['backup_failed'], config: { url: `${base}/chat` } }, 'api');
    await dispatcher.stop();
    // Channel events are read at raise time; the burst goes to both channels by raising both events.
    const keys: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < BURST; i++) {
      raise({ db, bus }, { event: 'deploy_failed', subject: `burst${i}: deploy failed`, message: 'x', link: '/deploys/1' });
      raise({ db, bus }, { event: 'backup_failed', subject: `burst${i}: backup failed`, message: 'x', link: '/backups' });
      keys.push(`/hook|burst${i}: deploy failed`, `/chat|burst${i}: backup failed`);
    }
    const raiseMs = performance.now() - t0;
    const second = runDispatcher({ db, bus, sealer, log: silentLogger, baseUrl: () => 'https://svc.example.com' });
    await wait(keys, 60_000);
    const last = Math.max(...keys.map((k) => arrived.get(k) ?? Infinity)) - t0;
    const outbox = listOutbox(db, 10_000);
    const delivered = outbox.filter((m) => m.status === 'delivered').length;
    log(`burst: ${BURST * 2} messages raised in ${ms(raiseMs)}; last at the receivers after ${ms(last)} (${((BURST * 2) / (last / 1000)).toFixed(0)} messages/s, 4 in flight); outbox: ${delivered} of ${outbox.length} delivered (both parts), ${requests} requests at the receivers (none twice: ${requests === outbox.length})`);
    await second.stop();
  } finally {
    await dispatcher.stop();
    db.$client.close();
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
