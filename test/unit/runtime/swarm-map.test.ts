import { describe, expect, it } from 'vitest';
import { addressOn, currentTask, oomVerdict, stoppedBySwarm, toContainerInfoFromTask, toNodeView, type ServiceDoc, type TaskDoc } from '../../../src/runtime/swarm-map.js';
import { diffSnapshots, type SwarmSnapshot } from '../../../src/runtime/swarm-watch.js';
import { statusOfLine } from '../../../src/runtime/swarm-probe.js';

const svc: ServiceDoc = { ID: 's1', Spec: { Name: 'svc-web-1', Labels: { 'svc.app': 'web' }, TaskTemplate: { ContainerSpec: { Image: 'reg:5000/web:v1@sha256:' + 'a'.repeat(64) } } } };
const task = (o: Partial<TaskDoc> & { state?: string }): TaskDoc => ({
  ID: o.ID ?? 't1',
  ServiceID: 's1',
  NodeID: o.NodeID ?? 'n1',
  CreatedAt: o.CreatedAt ?? '2026-11-25T01:00:00.000000001Z',
  DesiredState: o.DesiredState ?? 'running',
  Status: { State: o.state ?? 'running', Timestamp: '2026-11-25T01:00:01Z', ContainerStatus: { ExitCode: o.state === 'failed' ? 1 : 0 } },
  NetworksAttachments: [
    { Network: { Spec: { Name: 'ingress' } }, Addresses: ['10.0.0.5/24'] },
    { Network: { Spec: { Name: 'svc' } }, Addresses: ['10.0.1.7/24'] },
  ],
});

describe('toContainerInfoFromTask', () => {
  it('a running task: running, its overlay address, the image without digest', () => {
    const info = toContainerInfoFromTask(svc, task({}), { network: 'svc', downNodes: new Set() });
    expect(info).toMatchObject({ id: 's1', name: 'svc-web-1', image: 'reg:5000/web:v1', state: 'running', running: true, address: '10.0.1.7', startedAt: '2026-11-25T01:00:01Z' });
  });

  it('a task on a node that is down is not running, whatever it last said', () => {
    const info = toContainerInfoFromTask(svc, task({}), { network: 'svc', downNodes: new Set(['n1']) });
    expect(info).toMatchObject({ running: false, state: 'exited', address: undefined, error: 'node n1 is down' });
  });

  it.each([
    ['pending', 'running', 'created', false],
    ['pending', 'ready', 'created', false],
    ['ready', 'ready', 'created', false],
    ['failed', 'shutdown', 'exited', false],
    ['shutdown', 'shutdown', 'exited', false],
    ['running', 'shutdown', 'exited', false],
    ['remove', 'remove', 'removing', false],
  ])('task %s (desired %s) -> %s', (state, desired, want, running) => {
    const info = toContainerInfoFromTask(svc, task({ state, DesiredState: desired }), { network: 'svc', downNodes: new Set() });
    expect(info.state).toBe(want);
    expect(info.running).toBe(running);
  });

  it.each([
    // [task state, desired state, node down, stopped by Swarm (not an exit of its own)]
    ['shutdown', 'shutdown', false, true], // drained (or scaled, updated): SIGTERM, exit 0, state shutdown
    ['running', 'shutdown', false, true], // being stopped for the drain right now
    ['running', 'remove', false, true],
    ['complete', 'shutdown', false, false], // exited 0 by itself; Swarm then sets desired shutdown
    ['failed', 'shutdown', false, false], // exited non-zero (or killed for memory) by itself
    ['rejected', 'shutdown', false, false], // its start was refused
    ['complete', 'running', false, false],
    ['failed', 'running', false, false],
    ['running', 'running', true, true], // its node is down: nothing ended as far as anyone knows
    ['failed', 'shutdown', true, true],
  ])('task %s (desired %s, node down %s): stopped by Swarm %s', (state, desired, nodeDown, want) => {
    expect(stoppedBySwarm({ DesiredState: desired, Status: { State: state } }, nodeDown)).toBe(want);
  });

  it('a drained task is reported exited (code 0) and stopped from outside; one that exited by itself is not', () => {
    const drained = toContainerInfoFromTask(svc, task({ state: 'shutdown', DesiredState: 'shutdown' }), { network: 'svc', downNodes: new Set() });
    expect(drained).toMatchObject({ state: 'exited', running: false, exitCode: 0, stoppedFromOutside: true });
    const own = toContainerInfoFromTask(svc, task({ state: 'complete', DesiredState: 'shutdown' }), { network: 'svc', downNodes: new Set() });
    expect(own).toMatchObject({ state: 'exited', exitCode: 0 });
    expect(own.stoppedFromOutside).toBeUndefined();
    expect(toContainerInfoFromTask(svc, task({}), { network: 'svc', downNodes: new Set() }).stoppedFromOutside).toBeUndefined();
  });

  it('no task at all: exited', () => {
    expect(toContainerInfoFromTask(svc, undefined, { downNodes: new Set() })).toMatchObject({ running: false, state: 'exited' });
  });

  it('the address on the named network, else the first that is not ingress', () => {
    expect(addressOn(task({}), 'svc')).toBe('10.0.1.7');
    expect(addressOn(task({}))).toBe('10.0.1.7');
    expect(addressOn(task({}), 'other')).toBeUndefined();
  });
});

describe('currentTask', () => {
  it('the newest by creation, not by version (an old task shut down later has the higher version)', () => {
    const old = { ...task({ ID: 'old', CreatedAt: '2026-11-25T01:00:00.5Z', state: 'shutdown' }), Version: { Index: 90 } };
    const fresh = { ...task({ ID: 'new', CreatedAt: '2026-11-25T01:00:00.75Z' }), Version: { Index: 80 } };
    expect(currentTask([old, fresh])?.ID).toBe('new');
    expect(currentTask([])).toBeUndefined();
  });
});

describe('toNodeView', () => {
  it('a manager with its advertised address, resources in cores and MiB', () => {
    const v = toNodeView({
      ID: 'n1',
      Description: { Hostname: 'box1', Engine: { EngineVersion: '20.10.24' }, Resources: { NanoCPUs: 2e9, MemoryBytes: 4096 * 1024 * 1024 } },
      Spec: { Role: 'manager', Availability: 'active', Labels: { 'svc.edge': 'true' } },
      Status: { State: 'ready', Addr: '0.0.0.0' },
      ManagerStatus: { Leader: true, Addr: '10.1.0.11:2377' },
    });
    expect(v).toEqual({ id: 'n1', hostname: 'box1', address: '10.1.0.11', role: 'manager', leader: true, availability: 'active', state: 'ready', labels: { 'svc.edge': 'true' }, engineVersion: '20.10.24', cpus: 2, memoryMb: 4096 });
  });

  it('a drained worker that is down', () => {
    const v = toNodeView({ ID: 'n2', Spec: { Role: 'worker', Availability: 'drain' }, Status: { State: 'down', Addr: '10.1.0.12' } });
    expect(v).toMatchObject({ role: 'worker', leader: false, availability: 'drain', state: 'down', address: '10.1.0.12', labels: {} });
  });
});

describe('diffSnapshots', () => {
  const snap = (tasks: [string, string, boolean][], nodes: [string, string][]): SwarmSnapshot => ({
    tasks: new Map(tasks.map(([id, fp, running]) => [id, { fp, running, name: `svc-${id}`, labels: { 'svc.app': id } }])),
    nodes: new Map(nodes.map(([id, state]) => [id, { state, hostname: `h-${id}` }])),
  });

  it('nothing on the first look or when nothing changed', () => {
    const s = snap([['a', 'x', true]], [['n1', 'ready']]);
    expect(diffSnapshots(undefined, s)).toEqual([]);
    expect(diffSnapshots(s, s)).toEqual([]);
  });

  it('a task that stopped, one that started, one removed, a node down', () => {
    const before = snap([['a', 'a1', true], ['b', 'b1', false], ['c', 'c1', true]], [['n1', 'ready'], ['n2', 'ready']]);
    const after = snap([['a', 'a2', false], ['b', 'b2', true]], [['n1', 'ready'], ['n2', 'down']]);
    expect(diffSnapshots(before, after).map((e) => `${e.action} ${e.name}`)).toEqual(['die svc-a', 'start svc-b', 'destroy svc-c', 'node_down h-n2']);
  });

  it('a node whose labels changed (svc.edge): node_changed; a state change and a label change together: both', () => {
    const at = (state: string, labels: string) => ({ tasks: new Map(), nodes: new Map([['n1', { state, hostname: 'h-n1', labels }]]) }) as SwarmSnapshot;
    expect(diffSnapshots(at('ready', '[]'), at('ready', '[["svc.edge","true"]]')).map((e) => e.action)).toEqual(['node_changed']);
    expect(diffSnapshots(at('ready', '[]'), at('down', '[["svc.edge","true"]]')).map((e) => e.action)).toEqual(['node_down', 'node_changed']);
    expect(diffSnapshots(at('ready', '[]'), at('ready', '[]'))).toEqual([]);
  });

  it('a node that joined and one that left (the node agents follow them)', () => {
    const before = snap([], [['n1', 'ready'], ['n2', 'ready']]);
    const after = snap([], [['n1', 'ready'], ['n3', 'unknown']]);
    expect(diffSnapshots(before, after).map((e) => `${e.action} ${e.name}`)).toEqual(['node_joined h-n3', 'node_left h-n2']);
  });
});

describe('statusOfLine', () => {
  it.each([
    ['HTTP/1.0 200 OK\r\n', 200],
    ['HTTP/1.1 503 Service Unavailable', 503],
    ['', undefined],
    ['garbage', undefined],
  ])('%j -> %s', (line, want) => expect(statusOfLine(line)).toBe(want));
});

describe('oomVerdict: what an exit 137 of a Swarm task says', () => {
  it.each([
    ['not a SIGKILL', { exitCode: 1, taskState: 'failed', memoryLimitBytes: 1 }, {}],
    ['the engine that ran it says OOMKilled', { exitCode: 137, taskState: 'failed', memoryLimitBytes: 1, engineSays: true }, { oomKilled: true }],
    ['the engine that ran it says no (a kill)', { exitCode: 137, taskState: 'failed', memoryLimitBytes: 1, engineSays: false }, {}],
    ['on a worker, ended on its own under a limit: suspected', { exitCode: 137, taskState: 'failed', memoryLimitBytes: 64 << 20 }, { oomLikely: true }],
    ['on a worker, without a memory limit', { exitCode: 137, taskState: 'failed' }, {}],
    ['on a worker, stopped by svc (task shutdown after its grace)', { exitCode: 137, taskState: 'shutdown', memoryLimitBytes: 64 << 20 }, {}],
  ] as const)('%s', (_, input, want) => {
    expect(oomVerdict(input)).toEqual(want);
  });
});
