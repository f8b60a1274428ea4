// A Swarm node going down is a stored event and a notification (issue 19 section 2, issue 21): the pure
// transition rule, the store and the storm rule through real SQLite, the watch over the fake runtime,
// the manager's hook, and the API and page that show them.
import { describe, expect, it } from 'vitest';
import { nodeTransitions, recordNodeStates } from '../../../src/cluster/node-events.js';
import { createNodeWatch, NODES_KEY } from '../../../src/cluster/node-watch.js';
import { createManager } from '../../../src/controller/manager.js';
import { createChannel } from '../../../src/desired/notify.js';
import { silentLogger } from '../../../src/log.js';
import { Bus } from '../../../src/events/bus.js';
import { listOutbox } from '../../../src/store/notify.js';
import { listNodeEvents } from '../../../src/store/node-events.js';
import { notifyOutbox } from '../../../src/store/schema/index.js';
import { createTestApi } from '../../support/api.js';
import { commandCtx } from '../../support/commands.js';
import { memoryDb, testSealer } from '../../support/db.js';
import { createFakeClock, settle } from '../../support/fake-clock.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { waitFor } from '../../support/wait.js';

const n = (id: string, state: string) => ({ id, hostname: `box-${id}`, state });
const T0 = Date.parse('2026-11-25T04:00:00Z');
const MIN = 60_000;

describe('nodeTransitions (pure)', () => {
  it.each([
    ['a ready node never seen', undefined, 'ready', []],
    ['a node just joined (unknown)', undefined, 'unknown', []],
    ['a node lost', undefined, 'down', ['down']],
    ['a node disconnected', 'up', 'disconnected', ['down']],
    ['still down', 'down', 'down', []],
    ['down, then unknown', 'down', 'unknown', []],
    ['back', 'down', 'ready', ['up']],
    ['ready after an up', 'up', 'ready', []],
  ] as const)('%s', (_, last, state, expected) => {
    const stored = new Map(last ? [['a', { kind: last }]] : []);
    expect(nodeTransitions(stored, [n('a', state)]).map((t) => t.kind)).toEqual(expected);
  });
});

function withChannel() {
  const db = memoryDb();
  createChannel(commandCtx(db, { sealer: testSealer() }), { name: 'ops', type: 'slack', events: ['node_down', 'node_recovered'], config: { url: 'http://127.0.0.1:9/hook' } }, 'api');
  return db;
}

describe('recordNodeStates', () => {
  const bus = new Bus();
  it('stores down and up once each and notifies with the storm rule', () => {
    const db = withChannel();
    expect(recordNodeStates({ db, bus }, [n('m', 'ready'), n('w1', 'down')], T0).map((t) => `${t.kind} ${t.node.id}`)).toEqual(['down w1']);
    // The watcher repeating itself, or a second look: nothing new.
    expect(recordNodeStates({ db, bus }, [n('m', 'ready'), n('w1', 'down')], T0 + 1000)).toEqual([]);
    expect(recordNodeStates({ db, bus }, [n('m', 'ready'), n('w1', 'ready')], T0 + 2 * MIN).map((t) => t.kind)).toEqual(['up']);
    // Flapping within 15 minutes: stored every time, announced once (then its one recovery).
    recordNodeStates({ db, bus }, [n('w1', 'down')], T0 + 3 * MIN);
    recordNodeStates({ db, bus }, [n('w1', 'ready')], T0 + 4 * MIN);
    expect(listNodeEvents(db, 10).map((e) => `${e.kind} ${e.hostname} ${e.state}`)).toEqual(['up box-w1 ready', 'down box-w1 down', 'up box-w1 ready', 'down box-w1 down']);
    const sent = listOutbox(db).map((o) => `${o.event}: ${o.subject}`).sort();
    expect(sent).toEqual(['node_down: node box-w1 is down', 'node_recovered: node box-w1 is ready again']);
    const msg = db.select().from(notifyOutbox).all().find((o) => o.event === 'node_down')!;
    expect(msg.link).toBe('/nodes');
    expect(msg.message).toContain('box-w1');
    // After the window, a new loss is announced again.
    recordNodeStates({ db, bus }, [n('w1', 'down')], T0 + 20 * MIN);
    expect(listOutbox(db).filter((o) => o.event === 'node_down')).toHaveLength(2);
    expect(recordNodeStates({ db, bus }, [n('w1', 'down')], T0 + 21 * MIN)).toEqual([]);
  });

  it('without a channel that chose it, stores the event and sends nothing', () => {
    const db = memoryDb();
    recordNodeStates({ db, bus }, [n('w1', 'disconnected')], T0);
    expect(listNodeEvents(db, 10)).toHaveLength(1);
    expect(listOutbox(db)).toEqual([]);
  });
});

describe('node watch and the manager', () => {
  it('a node_down event from the runtime makes one stored event, and the dispatcher is woken', async () => {
    const db = withChannel();
    const rt = new FakeRuntime();
    rt.nodeList = [{ ...rt.nodeList[0]! }, { ...rt.nodeList[0]!, id: 'w1', hostname: 'box-w1', role: 'worker', leader: false }];
    let woken = 0;
    // The dispatcher hears of each raise that queued a message on the bus (raise.ts).
    const bus = new Bus();
    bus.on('notice', () => woken++);
    const clock = createFakeClock();
    const manager = createManager({ runtime: rt, instance: 'test-nodes', clock, log: silentLogger, onNodesChanged: () => manager.enqueue(NODES_KEY) });
    manager.register(createNodeWatch({ db, bus, runtime: rt, log: silentLogger }));
    manager.start();
    await waitFor(() => rt.subscriberCount > 0, { what: 'the event subscription' });
    await settle();
    expect(rt.calls.some((c) => c.method === 'nodes')).toBe(true); // looked at connection
    expect(listNodeEvents(db, 10)).toEqual([]);

    rt.nodeList[1]!.state = 'down';
    rt.emitRaw({ action: 'node_down', id: 'w1', name: 'box-w1', labels: {} });
    rt.emitRaw({ action: 'node_down', id: 'w1', name: 'box-w1', labels: {} });
    await waitFor(() => listNodeEvents(db, 10).length > 0, { what: 'the stored node event' });
    await waitFor(() => manager.stats().running + manager.stats().queued === 0, { what: 'the looks done' });
    expect(listNodeEvents(db, 10).map((e) => `${e.kind} ${e.nodeId}`)).toEqual(['down w1']);
    expect(woken).toBe(1);

    rt.nodeList[1]!.state = 'ready';
    rt.emitRaw({ action: 'node_up', id: 'w1', name: 'box-w1', labels: {} });
    await waitFor(() => listNodeEvents(db, 10).length === 2, { what: 'the recovery' });
    await waitFor(() => manager.stats().running + manager.stats().queued === 0, { what: 'the looks done' });
    // Looking again changes nothing: the states match the last stored event of each node.
    const looks = rt.calls.filter((c) => c.method === 'nodes').length;
    manager.enqueue(NODES_KEY);
    await waitFor(() => rt.calls.filter((c) => c.method === 'nodes').length === looks + 1, { what: 'one more look' });
    await waitFor(() => manager.stats().running + manager.stats().queued === 0, { what: 'the look done' });
    expect(listNodeEvents(db, 10)).toHaveLength(2);
    expect(woken).toBe(2);
    await manager.stop();
  });

  it('an engine that fails the look logs and keeps going', async () => {
    const db = memoryDb();
    const lines: string[] = [];
    const failing = { nodes: async () => Promise.reject(new Error('engine gone')) };
    const watch = createNodeWatch({ db, bus: new Bus(), runtime: failing, log: { ...silentLogger, warn: (m: string) => void lines.push(m) } as never });
    expect(await watch.reconcile('events')).toEqual({});
    expect(lines).toEqual(['looking at the nodes failed']);
  });
});

describe('GET /api/nodes/events and down_since', () => {
  it('lists the stored events newest first and marks a node down since when', async () => {
    const rt = new FakeRuntime();
    rt.swarm = true;
    rt.nodeList = [{ ...rt.nodeList[0]! }, { ...rt.nodeList[0]!, id: 'w1', hostname: 'box-w1', role: 'worker', leader: false, state: 'down' }];
    const t = createTestApi({ runtime: rt });
    await t.login();
    recordNodeStates({ db: t.db, bus: new Bus() }, rt.nodeList, T0);
    const events = await t.request('GET', '/api/nodes/events');
    expect(events.status).toBe(200);
    expect(events.body).toEqual([{ id: 1, node_id: 'w1', hostname: 'box-w1', kind: 'down', state: 'down', at: '2026-11-25T04:00:00.000Z' }]);
    const nodes = await t.request('GET', '/api/nodes');
    expect(nodes.body.map((x: { id: string; down_since: string | null }) => [x.id, x.down_since])).toEqual([
      ['local', null],
      ['w1', '2026-11-25T04:00:00.000Z'],
    ]);
    expect((await t.request('GET', '/api/nodes/events?limit=0')).status).toBe(400);
    expect((await t.request('GET', '/api/nodes/events?limit=1')).body).toHaveLength(1);
    expect((await t.request('GET', '/api/nodes/events', undefined, { cookie: 'none' })).status).toBe(401);
  });
});
