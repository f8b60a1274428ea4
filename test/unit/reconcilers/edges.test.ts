// The edge nodes reconciler (`edges:main`) on a fake of the SwarmObjects port: a node labelled svc.edge=true
// gets its services (the boot secrets first, the resolver with the resolver image), a second pass changes nothing,
// the label removed takes them away; the proxy is told after every pass (node events enqueue the key). When the
// resolver image cannot be had a pass fails, saying why.
import { describe, expect, it } from 'vitest';
import { createEdgesReconciler, EDGES_RESYNC_MS } from '../../../src/reconcilers/edges/reconciler.js';
import { EDGE_PARTS, EDGE_SERVICES, edgeBootSecret, edgeServiceName } from '../../../src/runtime/swarm-edge-spec.js';
import { silentLogger } from '../../../src/log.js';
import { createFakeSwarm } from '../../support/fake-swarm.js';

describe('the edge nodes reconciler', () => {
  it('makes the edge services of a labelled node, then nothing; the label removed takes them away; tells the proxy after every pass', async () => {
    const swarm = createFakeSwarm({ self: 'manager0000001', nodes: [{ id: 'manager0000001', labels: { 'svc.edge': 'true' } }, { id: 'worker0000001', hostname: 'w1', labels: { 'svc.edge': 'true' } }, { id: 'worker0000002' }] });
    let told = 0;
    const r = createEdgesReconciler({ swarm, instance: 'svc-t', network: 'svc-t-net', image: 'caddy:2', resolverImage: async () => 'svc/dnsmasq', log: silentLogger, passed: () => told++ });
    expect(r.kind).toBe('edges');
    expect(await r.listNames()).toEqual(['main']);
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: EDGES_RESYNC_MS });
    expect(swarm.writes).toEqual(['network', ...EDGE_PARTS.map((p) => `secret ${edgeBootSecret('svc-t', p).name}`), ...EDGE_SERVICES.map((p) => `create ${edgeServiceName('svc-t', p, 'worker0000001')}`)]);
    expect([...swarm.serviceMap.values()].map((s) => s.image)).toEqual(['caddy:2', 'caddy:2', 'svc/dnsmasq']);
    expect(told).toBe(1);
    swarm.writes.length = 0;
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: EDGES_RESYNC_MS });
    expect(swarm.writes).toEqual([]);
    expect(told).toBe(2);
    swarm.nodeList[1]!.labels = {};
    await r.reconcile('main');
    expect(swarm.writes).toEqual(EDGE_SERVICES.map((p) => `rm ${edgeServiceName('svc-t', p, 'worker0000001')}`));
    swarm.down = true;
    await expect(r.reconcile('main')).rejects.toThrow('the engine is not answering');
    expect(told).toBe(3);
    swarm.down = false;
    const none = createEdgesReconciler({ swarm, instance: 'svc-t', network: 'svc-t-net', image: 'caddy:2', resolverImage: () => Promise.reject(new Error('SVC_RESOLVER_IMAGE is unset and this host has no /usr/sbin/dnsmasq')), log: silentLogger });
    await expect(none.reconcile('main')).rejects.toThrow(/SVC_RESOLVER_IMAGE/);
  });
});
