// Long-lived connections outlive a deploy (issue 37), end to end: the real daemon, Docker engine, Caddy
// (2.11 by default, Debian's 2.6.2 with SVC_TEST_CADDY=/usr/bin/caddy) and DNS responder. A WebSocket echo
// app and a server-sent-events app (test/support/stream-images.ts) are deployed 3 times each, in turn, while
// clients stay connected: no connection is cut before its version's drain ends, a new connection reaches the
// new version at once, and the old version is stopped (its clients then cut) once drain_seconds passed.
import http from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivenCaddy } from '../../src/proxy/caddy-version.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureStreamImages, STREAM_PORT, STREAM_V1, STREAM_V2 } from '../support/stream-images.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const DRAIN_S = 60;
const DEPLOYS = 3;
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
const apps: Record<'ws' | 'sse', { id: number; port: number }> = {} as never;
const clients: Client[] = [];
/** drain_until of each deploy that replaced a version, as its record said at its success. */
const drainEnds = new Map<number, number>();
/** Cut before the drain of its version ended (a cut after it is the drain's end, expected). */
const cutEarly = (c: Client) => c.closedAt !== undefined && (c.drainedBy === undefined || c.closedAt < drainEnds.get(c.drainedBy)! - 50);

/** A held connection: the version it reached, and when (if) it was cut. */
interface Client {
  kind: 'ws' | 'sse';
  version: string;
  /** The deploy whose switch made its version drain (set when it happens). */
  drainedBy?: number;
  closedAt?: number;
  closeCode?: number;
  /** WebSocket: one echo round trip; SSE: the next event. Answers the version that answered. */
  probe(): Promise<string>;
  close(): void;
}

async function openWs(port: number): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const probe = () =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no echo within 3 s')), 3_000);
      ws.once('message', (m) => {
        clearTimeout(timer);
        resolve(m.toString().split(' ')[0]);
      });
      ws.send('ping');
    });
  const c: Client = { kind: 'ws', version: '', probe, close: () => ws.terminate() };
  ws.on('close', (code) => {
    c.closedAt ??= Date.now();
    c.closeCode = code;
  });
  ws.on('error', () => {});
  c.version = await probe();
  return c;
}

async function openSse(port: number): Promise<Client> {
  let waiting: ((v: string) => void) | undefined;
  let buffer = '';
  const c: Client = { kind: 'sse', version: '', probe: () => new Promise((r) => (waiting = r)), close: () => req.destroy() };
  const req = http.get({ host: '127.0.0.1', port, path: '/events', agent: false });
  await new Promise<void>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const w = waiting;
          waiting = undefined;
          w?.(event.replace(/^data: /, '').split(' ')[0]);
        }
      });
      const cut = () => (c.closedAt ??= Date.now());
      res.on('end', cut);
      res.on('close', cut);
      res.on('error', cut);
      resolve();
    });
  });
  c.version = await c.probe();
  return c;
}

const open = (kind: 'ws' | 'sse') => (kind === 'ws' ? openWs(apps.ws.port) : openSse(apps.sse.port));
const deploy = async (kind: 'ws' | 'sse', image: string) => {
  const id = await requestImageDeploy(t, apps[kind].id, image);
  return deployReaching(t, id, (d) => d.status === 'success', 'to succeed');
};
const events = async (id: number) => (await t.api('GET', `/api/deploys/${id}/events`)).body as { step: string; level: string; message: string }[];

beforeAll(async () => {
  await Promise.all([ensureStreamImages(runtime), ensureTestImages(runtime)]);
  t = await startTestDaemon('streams');
  for (const kind of ['ws', 'sse'] as const) {
    const port = await freePort();
    const res = await t.api('POST', '/api/apps', { name: `st-${kind}`, internal_port: STREAM_PORT, access_mode: 'port', fallback_port: port, drain_seconds: DRAIN_S });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    apps[kind] = { id: res.body.id, port };
  }
  // Each app's listener is a config load: made before any stream opens.
  for (const kind of ['ws', 'sse'] as const) await deploy(kind, STREAM_V1);
  await waitFor(async () => (await open('ws').then((c) => (c.close(), true)).catch(() => false)), { timeoutMs: 10_000, what: 'st-ws to answer through Caddy' });
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await t?.close();
});

describe('long-lived connections across deploys', () => {
  it(`WebSockets and event streams stay open across ${DEPLOYS} deploys of their own app and of the other; new connections reach the new version at once`, async () => {
    let version = 'v1';
    for (const kind of ['ws', 'sse'] as const) clients.push(await open(kind));
    for (let round = 0; round < DEPLOYS; round++) {
      version = version === 'v1' ? 'v2' : 'v1';
      for (const kind of ['ws', 'sse'] as const) {
        const d = await deploy(kind, version === 'v1' ? STREAM_V1 : STREAM_V2);
        expect(d.drain_until, 'the deploy succeeds while its old version drains').not.toBeNull();
        drainEnds.set(d.id, Date.parse(d.drain_until));
        for (const c of clients) if (c.kind === kind && c.drainedBy === undefined) c.drainedBy = d.id;
        // At once: the very next connection is the new version's.
        const fresh = await open(kind);
        expect(fresh.version, `a new ${kind} connection after deploy ${d.id}`).toBe(version);
        clients.push(fresh);
        // Every connection opened so far still answers, from the version it reached, unless its drain ended
        // (a loaded machine may take longer than drain_seconds for the rounds).
        for (const c of clients) {
          expect(cutEarly(c), `${c.kind} client on ${c.version} cut before its drain ended`).toBe(false);
          if (c.closedAt === undefined) expect(await c.probe()).toBe(c.version);
        }
      }
    }
    expect(clients.filter((c) => c.closedAt === undefined).length).toBeGreaterThanOrEqual(4); // at least the newest two of each app
  }, 120_000);

  it('a config load svc makes (a new app and its listener) keeps the WebSockets on a Caddy >= 2.7; on 2.6.2 it closes them (1001), streams survive', async () => {
    const caddy = await drivenCaddy(t.caddy.adminUrl);
    const before = clients.filter((c) => c.closedAt === undefined);
    const port = await freePort();
    const res = await t.api('POST', '/api/apps', { name: 'st-other', internal_port: 3000, access_mode: 'port', fallback_port: port, image_ref: WEB_V1 });
    expect(res.status).toBe(201);
    // The load happened once the other app's listener answers.
    await waitFor(() => new Promise<boolean>((r) => http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (x) => (x.resume(), r(true))).on('error', () => r(false))), { timeoutMs: 10_000, what: 'the new listener' });
    await new Promise((r) => setTimeout(r, 500)); // a close at a load comes within 0.1 s
    const ws = before.filter((c) => c.kind === 'ws');
    const sse = before.filter((c) => c.kind === 'sse');
    expect(ws.length).toBeGreaterThan(0);
    for (const c of sse) expect(cutEarly(c), `event stream on ${c.version}`).toBe(false);
    if (caddy.features.streamCloseDelay) {
      for (const c of ws) {
        expect(cutEarly(c), `WebSocket on ${c.version}`).toBe(false);
        if (c.closedAt === undefined) expect(await c.probe()).toBe(c.version);
      }
    } else {
      // Debian's 2.6.2 (docs/architecture.md "Long-lived connections"): what it does, asserted so a change shows.
      for (const c of ws) expect(c.closeCode).toBe(1001);
      for (const c of clients.filter((x) => x.kind === 'ws')) clients.splice(clients.indexOf(c), 1);
    }
  }, 60_000);

  it('the old versions are stopped only when drain_seconds passed; stop_old says what was open', async () => {
    const drained = clients.filter((c) => c.drainedBy !== undefined);
    expect(drained.length).toBeGreaterThan(0);
    for (const c of drained) {
      const d = (await t.api('GET', `/api/deploys/${c.drainedBy}`)).body;
      const until = d.drain_until ? Date.parse(d.drain_until) : undefined;
      await waitFor(() => c.closedAt !== undefined, { timeoutMs: (DRAIN_S + 20) * 1000, what: `the ${c.kind} client on ${c.version} to be cut at its drain's end` });
      expect(cutEarly(c), `${c.kind} client cut before its drain ended`).toBe(false);
      if (until !== undefined) expect(c.closedAt!).toBeGreaterThanOrEqual(until - 50);
    }
    // Versions whose clients were all cut at their drain's end (on 2.6.2 the WebSockets went at the load).
    for (const id of new Set(drained.map((c) => c.drainedBy!))) {
      // Written once the stop returned (the clients are cut at the SIGTERM, a moment before).
      const last = await waitFor(async () => (await events(id)).filter((e) => e.step === 'stop_old' && / stopped (and|\(kept)/.test(e.message)).at(-1), { timeoutMs: 20_000, what: `deploy ${id}'s drain to end` });
      expect(last.message).toMatch(new RegExp(`stopped and removed: drain_seconds \\(${DRAIN_S} s\\) passed; [1-9]\\d* connections? open at the switch, [1-9]\\d* still open when it stopped$`));
      expect(last.level).toBe('warn');
    }
    // The newest version of each app still serves its own clients.
    for (const c of clients.filter((x) => x.drainedBy === undefined)) expect(await c.probe()).toBe(c.version);
  }, 120_000);
});
