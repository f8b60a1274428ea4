// The manager's edge relay (docs/decisions/0047-swarm-edge-resolves.md), with real Caddys, a real resolver and
// no cluster (test/support/relay-rig.ts): the relay resolves the apps' names through the resolver beside it,
// so a switch is a hosts file renamed over and never a config load: POSTs whose app answers before reading
// the body never fail at a switch (the EPIPE POST 502 of issue 19 came from a reload of the relay carrying the
// traffic); a new answer reaches traffic at once; a daemon restarted loads nothing; the pair of before goes.
import { existsSync, symlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeAdmin } from '../../src/proxy/edge-admin.js';
import { edgeResolverName } from '../../src/proxy/edge-relay.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { startLoad, formatCounts } from '../../bench/common.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { ensureDnsImage } from '../support/dns-image.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { startRelayRig, type RelayRig } from '../support/relay-rig.js';
import { waitFor } from '../support/wait.js';

let rig: RelayRig;
beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureCaddyImage(), ensureDnsImage()]);
  // The pair of before: relay B's container and the link the host's Caddy dialled.
  rig = await startRelayRig({
    before: async ({ instance, runtime, paths, network }) => {
      await runtime.run({ name: `${instance}-edge-b`, image: WEB_V1, network, labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance, [LABELS.role]: 'edge' } });
      const { mkdirSync } = await import('node:fs');
      mkdirSync(paths.dir, { recursive: true });
      symlinkSync('relay-b.sock', `${paths.dir}/relay.sock`);
    },
  });
}, 180_000);
afterAll(async () => {
  await rig?.close();
});

const relayConfig = async () => (await createEdgeAdmin(rig.paths.adminSocket)('GET', '/config/')).text;
const body = async () => (await fetch(`http://127.0.0.1:${rig.port}/`, { signal: AbortSignal.timeout(10_000) })).text();

describe('the relay resolves', () => {
  it('the pair of before is gone: relay B and the link', async () => {
    expect(await rig.runtime.inspect(`${rig.instance}-edge-b`)).toBeUndefined();
    expect(existsSync(`${rig.paths.dir}/relay.sock`)).toBe(false);
    expect((await rig.runtime.inspect(edgeResolverName(rig.instance)))?.running).toBe(true);
  });

  it('120 switches under slow-upload POSTs answered before their body is read: no failed request, no config load', async () => {
    const before = await relayConfig();
    expect(before).toContain('dynamic_upstreams');
    expect(before).not.toMatch(/"dial":"\d/);
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
    console.log(`120 switches through the relay: ${s.total} requests, ${failed} failed; non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)}`);
    expect(s.total).toBeGreaterThan(200);
    expect(failed, `${formatCounts(s.non2xx)} / ${formatCounts(s.connErrors)}`).toBe(0);
    expect(await relayConfig()).toBe(before);
  }, 120_000);

  it('a new answer reaches traffic within a moment, without a load', async () => {
    const before = await relayConfig();
    await rig.edge.writeDns(rig.recordsAt(1));
    await waitFor(async () => (await body()).includes('web v2'), { timeoutMs: 2000, intervalMs: 20, what: 'v2 answering' });
    await rig.edge.writeDns(rig.recordsAt(2));
    await waitFor(async () => (await body()).includes('web v1'), { timeoutMs: 2000, intervalMs: 20, what: 'v1 answering' });
    expect(await relayConfig()).toBe(before);
  });

  it('a daemon restarted loads nothing that is served', async () => {
    const relay = rig.restart();
    expect(await relay.ensureRunning()).toBe('running');
    expect(await relay.serves(rig.routes)).toBe(true);
    const before = await relayConfig();
    await relay.applyRoutes(rig.routes);
    expect(await relayConfig()).toBe(before);
  });

  it('the resolver removed: ensureRunning makes it again and the apps answer', async () => {
    await rig.runtime.remove(edgeResolverName(rig.instance));
    const relay = rig.restart();
    await waitFor(async () => (await relay.ensureRunning()) === 'running' && (await rig.runtime.inspect(edgeResolverName(rig.instance)))?.running === true, { timeoutMs: 30_000, intervalMs: 200, what: 'the resolver again' });
    await waitFor(async () => (await body()).includes('web v1'), { timeoutMs: 10_000, intervalMs: 100, what: 'v1 answering again' });
  });
});
