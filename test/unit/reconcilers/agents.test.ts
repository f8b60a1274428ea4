// The node agents reconciler (`agents:main`) on a fake of the SwarmObjects port: observe the nodes, plan with the
// pure plan (tested by its table in swarm-agent-spec.test.ts), act in the one order that works, then nothing
// on a second pass; a node that leaves loses its agent; an engine error goes to the queue (backoff).
import { describe, expect, it } from 'vitest';
import { AGENTS_RESYNC_MS, createAgentsReconciler } from '../../../src/reconcilers/agents/reconciler.js';
import { agentSecret, agentServiceName } from '../../../src/runtime/swarm-agent-spec.js';
import { silentLogger } from '../../../src/log.js';
import { createFakeSwarm } from '../../support/fake-swarm.js';

const KEY = 'cd'.repeat(32);
const NODES = [{ id: 'manager0000001', hostname: 'm' }, { id: 'worker0000001', hostname: 'w1' }, { id: 'worker0000002', hostname: 'w2', labels: { 'svc.engine-socket': '/run/user/1000/docker.sock' } }];

describe('the node agents reconciler', () => {
  const setup = () => {
    const swarm = createFakeSwarm({ self: 'manager0000001', nodes: NODES.map((n) => ({ ...n })) });
    const r = createAgentsReconciler({ swarm, instance: 'svc-t', network: 'svc-t-net', image: 'caddy:2', key: KEY, log: silentLogger });
    return { swarm, r };
  };

  it('owns one key; the first pass makes the network, the secret, then an agent per other node; the second changes nothing', async () => {
    const { swarm, r } = setup();
    expect(r.kind).toBe('agents');
    expect(await r.listNames()).toEqual(['main']);
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: AGENTS_RESYNC_MS });
    const secret = agentSecret('svc-t', KEY).name;
    expect(swarm.writes).toEqual(['network', `secret ${secret}`, `create ${agentServiceName('svc-t', 'worker0000001')}`, `create ${agentServiceName('svc-t', 'worker0000002')}`]);
    const made = [...swarm.serviceMap.values()];
    // Each spec names the secret by the id Swarm gave it, and the node's own engine socket.
    const secretId = [...swarm.secretMap.values()][0]!.id;
    expect(JSON.stringify(made[0]!.spec)).toContain(`"SecretID":"${secretId}"`);
    expect(JSON.stringify(made[1]!.spec)).toContain('"Source":"/run/user/1000/docker.sock"');
    expect(made.map((s) => s.image)).toEqual(['caddy:2', 'caddy:2']);
    swarm.writes.length = 0;
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: AGENTS_RESYNC_MS });
    expect(swarm.writes).toEqual([]);
  });

  it('a node that left loses its agent; a label change updates it; an old secret goes once nothing uses it', async () => {
    const { swarm, r } = setup();
    await r.reconcile('main');
    await swarm.createSecret('svc-t-agent-old', { 'svc.managed': 'true', 'svc.instance': 'svc-t', 'svc.role': 'agent' }, 'x');
    swarm.inUse.add('svc-t-agent-old');
    swarm.nodeList = swarm.nodeList.filter((n) => n.id !== 'worker0000002');
    swarm.nodeList[1]!.labels = { 'svc.engine-socket': '/srv/docker.sock' };
    swarm.writes.length = 0;
    await r.reconcile('main');
    expect(swarm.writes).toEqual(['network', `update ${agentServiceName('svc-t', 'worker0000001')}`, `rm ${agentServiceName('svc-t', 'worker0000002')}`]);
    swarm.inUse.clear();
    swarm.writes.length = 0;
    await r.reconcile('main');
    expect(swarm.writes).toEqual(['secret rm svc-t-agent-old']);
  });

  it('an engine error rejects (the queue backs the key off)', async () => {
    const { swarm, r } = setup();
    swarm.down = true;
    await expect(r.reconcile('main')).rejects.toThrow('the engine is not answering');
  });
});
