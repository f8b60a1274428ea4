// The Nodes page through the real hono app over the fake runtime: one engine, then a Swarm with a node
// that is down, drain and activate, and the join command.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { playNodeReconciler } from '../../support/node-reconciler.js';
import { formClient } from './form-client.js';
import { recordNodeStates } from '../../../src/cluster/node-events.js';
import { Bus } from '../../../src/controller/bus.js';

let t: TestApi;
let rt: FakeRuntime;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  rt = new FakeRuntime();
  const nodes = playNodeReconciler(rt);
  t = createTestApi({ runtime: rt, bus: nodes.bus, onEnqueue: nodes.onEnqueue });
  nodes.attach(t.db);
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
});

const node = (id: string, hostname: string, role: 'manager' | 'worker', state = 'ready') => ({
  id, hostname, address: `10.1.0.${hostname.length}`, role, leader: role === 'manager', availability: 'active' as const, state, labels: {}, engineVersion: '20.10.24', cpus: 2, memoryMb: 2048,
});

describe('/nodes', () => {
  it('one engine: the host and how to grow, no drain and no join', async () => {
    const p = await b.get('/nodes');
    expect(p.status).toBe(200);
    expect(p.html).toContain('SVC_RUNTIME=docker');
    expect(p.html).not.toContain('Drain');
    expect(p.html).not.toContain('join command');
  });

  it('a Swarm: a down node shows as down; drain, activate and the join command', async () => {
    rt.swarm = true;
    rt.nodeList = [node('m1', 'box-m', 'manager'), node('w1', 'box-a', 'worker', 'down')];
    expect((await b.get('/nodes')).html).not.toContain('Recent node events');
    recordNodeStates({ db: t.db, bus: new Bus() }, rt.nodeList, Date.parse('2026-11-25T04:00:00Z'));
    const page = await b.get('/nodes');
    expect(page.html).toContain('box-a');
    expect(page.html).toContain('<strong>down</strong>');
    expect(page.html).toContain('down since 2026-11-25 04:00:00 UTC');
    expect(page.html).toContain('Recent node events');
    expect(page.html).toContain('2026-11-25 04:00:00 UTC: box-a went down');
    const drained = await b.post('/nodes/w1/drain', {});
    expect(drained.status).toBe(303);
    expect(rt.nodeList[1]!.availability).toBe('drain');
    expect((await b.get('/nodes')).html).toContain('Activate');
    await b.post('/nodes/w1/activate', {});
    expect(rt.nodeList[1]!.availability).toBe('active');
    const join = await b.post('/nodes/join', {});
    expect(join.html).toContain('docker swarm join --token SWMTKN-1-fake-worker 10.1.0.11:2377');
  });
});
