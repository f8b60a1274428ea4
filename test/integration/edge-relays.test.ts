// The manager's two edge relays (docs/decisions/0039-two-relays-swapped.md), with real Caddys and no cluster
// (test/support/relay-rig.ts): no config is loaded into the relay that carries traffic, so POSTs whose app
// answers before reading the body never fail at a load (the EPIPE POST 502 of issue 19: with one relay the
// first test failed 3 runs in 3, 7-14 POST 502s per 120 loads; 7-26 per 200 in bench:relay-reloads); the link
// `relay.sock` (relative target) names the active relay, survives a daemon restart, replaces the socket of
// the single relay of before; a standby that is down makes a load in place, and is started again.
import { readlink, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeAdmin } from '../../src/proxy/edge-admin.js';
import { edgeRelayName } from '../../src/proxy/edge-relay.js';
import { startLoad, formatCounts } from '../../bench/common.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { ensureTestImages } from '../support/images.js';
import { startRelayRig, type RelayRig } from '../support/relay-rig.js';
import { waitFor } from '../support/wait.js';

let rig: RelayRig;
beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureCaddyImage()]);
  rig = await startRelayRig({ relays: 2 });
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

const link = () => readlink(rig.paths.socket);
const relayConfig = async (id: 'a' | 'b') => (await createEdgeAdmin(rig.paths.relays[id].adminSocket)('GET', '/config/')).text;
const get = async () => (await fetch(`http://127.0.0.1:${rig.port}/`, { signal: AbortSignal.timeout(10_000) })).status;

describe('two relays, swapped', () => {
  it('120 loads under slow-upload POSTs answered before their body is read: no failed request', async () => {
    const load = startLoad(rig.port, { clients: 16, maxMs: 90_000, postDelayMs: 10 });
    try {
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 1; i <= 120; i++) {
        await rig.edge.writeDns(rig.recordsAt(i));
        await new Promise((r) => setTimeout(r, 40 + Math.random() * 40));
      }
    } finally {
      await load.stop();
    }
    const s = load.stats;
    const failed = s.total - s.ok;
    console.log(`120 relay loads: ${s.total} requests, ${failed} failed; non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)}`);
    expect(s.total).toBeGreaterThan(200);
    expect(failed, `${formatCounts(s.non2xx)} / ${formatCounts(s.connErrors)}`).toBe(0);
  }, 120_000);

  it('each new config goes to the standby and the link (a relative target) swaps to it; the same config swaps nothing', async () => {
    const before = await link();
    expect(['relay-a.sock', 'relay-b.sock']).toContain(before);
    await rig.edge.writeDns(rig.recordsAt(1001));
    const after = await link();
    expect(after).not.toBe(before);
    const active = after === 'relay-a.sock' ? 'a' : 'b';
    // The active relay has the new answer; the other still has the one before (no reload under traffic).
    expect(await relayConfig(active)).toContain('10.255.255.2');
    expect(await relayConfig(active === 'a' ? 'b' : 'a')).toContain('10.255.255.1');
    await rig.edge.writeDns(rig.recordsAt(1001));
    expect(await link()).toBe(after);
    // A flip-back to what the standby has: a swap only.
    await rig.edge.writeDns(rig.recordsAt(1000));
    expect(await link()).toBe(before);
    expect(await rig.edge.routes.serves(rig.routes)).toBe(true);
  });

  it('a daemon restarted reads the active relay from the link and loads nothing that is served', async () => {
    const before = await link();
    const pair = rig.restart();
    await pair.setRecords(rig.recordsAt(1000));
    await pair.applyRoutes(rig.routes);
    expect(await pair.serves(rig.routes)).toBe(true);
    expect(await link()).toBe(before);
  });

  it('a standby that is down: the active relay is loaded in place, the standby started again', async () => {
    const pair = rig.restart();
    const active = (await link()) === 'relay-a.sock' ? 'a' : 'b';
    const standby = active === 'a' ? 'b' : 'a';
    await rig.runtime.stop(edgeRelayName(rig.instance, standby), 0);
    await pair.setRecords(rig.recordsAt(2001));
    await pair.applyRoutes(rig.routes);
    expect(await link()).toBe(`relay-${active}.sock`);
    expect(await relayConfig(active)).toContain('10.255.255.2');
    expect(await get()).toBe(200);
    // The reconciler's look: not served while the standby is down; ensureRunning starts it.
    expect(await pair.serves(rig.routes)).toBe(false);
    await waitFor(async () => (await pair.ensureRunning()) === 'running' && (await pair.serves(rig.routes)), { timeoutMs: 30_000, intervalMs: 200, what: 'the standby running again' });
  });

  it('the socket of the single relay of before is replaced by the link', async () => {
    const old: Server = createServer();
    await rm(rig.paths.socket, { force: true });
    await new Promise<void>((r) => old.listen(rig.paths.socket, r));
    try {
      const pair = rig.restart();
      expect(await pair.serves(rig.routes)).toBe(false);
      await pair.setRecords(rig.recordsAt(1000));
      await pair.applyRoutes(rig.routes);
      expect(['relay-a.sock', 'relay-b.sock']).toContain(await link());
      expect(await pair.serves(rig.routes)).toBe(true);
      expect(await get()).toBe(200);
    } finally {
      // libuv unlinks the path it bound at close (now the link): the last test of the file.
      old.close();
    }
  });
});
