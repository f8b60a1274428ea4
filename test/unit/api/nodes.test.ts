import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { Bus } from '../../../src/controller/bus.js';
import { silentLogger } from '../../../src/log.js';
import { createNodeReconciler } from '../../../src/reconcilers/nodes/reconciler.js';
import { playNodeReconciler } from '../../support/node-reconciler.js';
import { nodeSpecOf, nodeSpecStatusOf } from '../../../src/store/node-specs.js';

let t: TestApi;
let rt: FakeRuntime;
const node = (id: string, hostname: string, role: 'manager' | 'worker') => ({
  id, hostname, address: `10.1.0.${id.length}`, role, leader: role === 'manager', availability: 'active' as const, state: 'ready', labels: {}, engineVersion: '20.10.24', cpus: 2, memoryMb: 2048,
});

/** The node reconciler, run as the work queue would when the PUT enqueues `node:<ref>`. */
let applied: string[];
beforeEach(async () => {
  rt = new FakeRuntime({ images: ['web:v1'] });
  const nodes = playNodeReconciler(rt);
  applied = nodes.applied;
  t = createTestApi({ runtime: rt, bus: nodes.bus, onEnqueue: nodes.onEnqueue });
  nodes.attach(t.db);
  await t.login();
});

describe('nodes on a single engine (SVC_RUNTIME=docker)', () => {
  it('GET lists the one engine with the replicas on it', async () => {
    await rt.run({ name: 'svc-web-1', image: 'web:v1', labels: { 'svc.role': 'app', 'svc.app': 'web' } });
    const res = await t.request('GET', '/api/nodes');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: 'local', hostname: 'host', address: '', role: 'manager', leader: true, availability: 'active', state: 'ready', labels: {}, engine_version: '20.10.24', cpus: 2, memory_mb: 4096, replicas: [{ app: 'web', container: 'svc-web-1' }], down_since: null },
    ]);
  });

  it('join and PUT answer 409 not_a_swarm and change nothing', async () => {
    const join = await t.request('POST', '/api/nodes/join', {});
    expect(join.status).toBe(409);
    expect(join.body).toMatchObject({ code: 'not_a_swarm' });
    const put = await t.request('PUT', '/api/nodes/local', { availability: 'drain' });
    expect(put.status).toBe(409);
    expect(rt.nodeList[0]!.availability).toBe('active');
  });
});

describe('nodes of a Swarm', () => {
  beforeEach(() => {
    rt.swarm = true;
    rt.nodeList = [node('w2', 'box-b', 'worker'), node('m1', 'box-m', 'manager'), node('w1', 'box-a', 'worker')];
  });

  it('managers first, then by host name', async () => {
    const res = await t.request('GET', '/api/nodes');
    expect(res.body.map((n: { hostname: string }) => n.hostname)).toEqual(['box-m', 'box-a', 'box-b']);
  });

  it('POST /nodes/join answers the exact docker swarm join command (worker by default, or manager)', async () => {
    const res = await t.request('POST', '/api/nodes/join', {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ role: 'worker', command: ['docker', 'swarm', 'join', '--token', 'SWMTKN-1-fake-worker', '10.1.0.11:2377'], command_line: 'docker swarm join --token SWMTKN-1-fake-worker 10.1.0.11:2377' });
    expect((await t.request('POST', '/api/nodes/join', { role: 'manager' })).body.role).toBe('manager');
    expect((await t.request('POST', '/api/nodes/join', { role: 'boss' })).status).toBe(400);
  });

  it('PUT drains a node and sets its labels', async () => {
    const res = await t.request('PUT', '/api/nodes/w1', { availability: 'drain', labels: { 'svc.edge': 'true' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'w1', availability: 'drain', labels: { 'svc.edge': 'true' } });
  });

  it('PUT records the change as desired state that the node reconciler applies, once', async () => {
    await t.request('PUT', '/api/nodes/w1', { labels: { zone: 'a' } });
    expect(t.enqueue.keys).toContain('node:w1');
    expect(applied).toEqual(['node:w1']);
    expect(nodeSpecOf(t.db, 'w1')).toMatchObject({ availability: null, labels: { zone: 'a' }, generation: 1 });
    expect(nodeSpecStatusOf(t.db, 'w1')).toMatchObject({ generation: 1, code: null });
    // A later request carries only its own fields: the labels are not sent again with an availability.
    await t.request('PUT', '/api/nodes/w1', { availability: 'pause' });
    const calls = rt.calls.filter((c) => c.method === 'updateNode').map((c) => c.args[1]);
    expect(calls).toEqual([{ labels: { zone: 'a' } }, { availability: 'pause' }]);
    // A resync finds nothing to do.
    const rec = createNodeReconciler({ db: t.db, runtime: rt, bus: new Bus(), log: silentLogger });
    expect(await rec.listNames()).toEqual([]);
    await rec.reconcile('w1');
    expect(rt.calls.filter((c) => c.method === 'updateNode')).toHaveLength(2);
  });

  it.each([
    ['nothing to change', {}],
    ['an unknown availability', { availability: 'gone' }],
    ['a bad label key', { labels: { 'a b': 'x' } }],
    ['an unknown field', { availability: 'drain', role: 'manager' }],
  ])('PUT with %s is a 400 and changes nothing', async (_, body) => {
    const res = await t.request('PUT', '/api/nodes/w1', body);
    expect(res.status).toBe(400);
    expect(rt.calls.filter((c) => c.method === 'updateNode')).toEqual([]);
  });

  it('an unknown or malformed node id is a 404', async () => {
    expect((await t.request('PUT', '/api/nodes/nope', { availability: 'drain' })).status).toBe(404);
    expect((await t.request('PUT', '/api/nodes/..%2F..', { availability: 'drain' })).status).toBe(404);
  });

  it('needs a login', async () => {
    expect((await t.request('GET', '/api/nodes', undefined, { cookie: 'none' })).status).toBe(401);
  });
});
