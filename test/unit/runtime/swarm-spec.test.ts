import { describe, expect, it } from 'vitest';
import { constrainedNode, dataTask, pinnedNode, placementConstraints, toServiceSpec } from '../../../src/runtime/swarm-spec.js';
import { checkContainerPath } from '../../../src/runtime/docker-archive.js';
import type { ContainerSpec } from '../../../src/runtime/runtime.js';

const nodes = (...ids: [string, boolean][]) => ids.map(([id, schedulable]) => ({ id, schedulable }));

describe('placementConstraints', () => {
  it.each([
    ['no sibling yet: anywhere', nodes(['a', true], ['b', true]), [], []],
    ['away from the siblings while a node is free', nodes(['a', true], ['b', true], ['c', true]), ['b', 'a'], ['node.id!=a', 'node.id!=b']],
    ['every schedulable node taken: no spread constraint', nodes(['a', true], ['b', true]), ['a', 'b'], []],
    ['a drained or down node does not count as free', nodes(['a', true], ['b', true], ['c', false]), ['a', 'b'], []],
    ['a sibling on a down node still leaves the others', nodes(['a', true], ['b', true], ['c', false]), ['c'], ['node.id!=c']],
  ] as const)('%s', (_, n, siblings, want) => {
    expect(placementConstraints({ nodes: [...n], siblingNodes: [...siblings] })).toEqual(want);
  });

  it('a pinned service runs on its node only', () => {
    expect(placementConstraints({ nodes: nodes(['a', true]), siblingNodes: ['a'], pinnedNode: 'm' })).toEqual(['node.id==m']);
  });
});

describe('pinnedNode: data decides where a container runs', () => {
  const cluster = (labelled: string[]) => ['m', 'w1', 'w2'].map((id) => ({ id, labels: (labelled.includes(id) ? { 'svc.services': 'true', other: 'x' } : { 'svc.edge': 'true' }) as Record<string, string> }));
  it.each([
    ['an app replica without volumes: anywhere (spread)', 'app', false, [], undefined, undefined],
    ['an app with volumes: the manager (its disk holds them)', 'app', true, [], undefined, 'm'],
    ['an app with volumes ignores the services label', 'app', true, ['w1'], undefined, 'm'],
    ['a managed service, no label: the manager', 'service', true, [], undefined, 'm'],
    ['a managed service, one node labelled svc.services=true: that node', 'service', true, ['w2'], undefined, 'w2'],
    ['a managed service, two nodes labelled: ambiguous, the manager', 'service', true, ['w1', 'w2'], undefined, 'm'],
    ['a healed service stays where it is, the label moved since', 'service', true, ['w2'], ['node.id==w1'], 'w1'],
    ['a healed app with volumes stays where it is', 'app', true, [], ['node.id == m'], 'm'],
    ['a healed app replica: spread constraints are not a pin', 'app', false, [], ['node.id!=w1'], undefined],
  ] as const)('%s', (_, role, hasMounts, labelled, current, want) => {
    expect(pinnedNode({ role, hasMounts, managerId: 'm', nodes: cluster([...labelled]), current: current ? [...current] : undefined })).toBe(want);
  });
});

describe('toServiceSpec', () => {
  const spec: ContainerSpec = {
    name: 'svc-web-3-r1',
    image: '10.0.0.1:5000/web:v1',
    env: { A: '1' },
    labels: { 'svc.app': 'web' },
    network: 'svc',
    networkAliases: ['web'],
    entrypoint: ['/start'],
    cmd: ['--x'],
    init: true,
    resources: { memoryMb: 64, cpus: 0.5 },
    mounts: [{ source: '/data/pg', target: '/var/lib/postgresql/data' }],
  };

  it('one replica, restart none, dnsrr, limits as resources, container labels too', () => {
    const s = toServiceSpec(spec, { constraints: ['node.id!=a'], stopGraceSeconds: 10 });
    expect(s).toEqual({
      Name: 'svc-web-3-r1',
      Labels: { 'svc.app': 'web' },
      TaskTemplate: {
        ContainerSpec: {
          Image: '10.0.0.1:5000/web:v1',
          Env: ['A=1'],
          Labels: { 'svc.app': 'web' },
          Command: ['/start'],
          Args: ['--x'],
          User: undefined,
          Dir: undefined,
          Init: true,
          StopGracePeriod: 10e9,
          Mounts: [{ Type: 'bind', Source: '/data/pg', Target: '/var/lib/postgresql/data', ReadOnly: undefined }],
        },
        Resources: { Limits: { MemoryBytes: 64 * 1024 * 1024, NanoCPUs: 5e8 } },
        RestartPolicy: { Condition: 'none' },
        Placement: { Constraints: ['node.id!=a'] },
        Networks: [{ Target: 'svc', Aliases: ['web'] }],
        ForceUpdate: undefined,
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' },
    });
  });

  it('no limits, no constraints: no keys for them', () => {
    const s = toServiceSpec({ ...spec, resources: undefined }, { constraints: [] });
    expect(s.TaskTemplate.Resources).toBeUndefined();
    expect(s.TaskTemplate.Placement).toEqual({ Constraints: undefined });
  });

  it('refuses the host network', () => {
    expect(() => toServiceSpec({ ...spec, hostNetwork: true }, { constraints: [] })).toThrow(/host network/);
  });
});

describe('clusterImage and splitTag', () => {
  it('a built image is named in the registry; any other stays as the user wrote it', async () => {
    const { clusterImage, splitTag } = await import('../../../src/runtime/swarm.js');
    expect(clusterImage('svc-build/web:abc', '10.0.0.1:5000')).toBe('10.0.0.1:5000/svc-build/web:abc');
    expect(clusterImage('svc-build/web:abc', 'reg.example/team/')).toBe('reg.example/team/svc-build/web:abc');
    expect(clusterImage('svc-build/web:abc', undefined)).toBe('svc-build/web:abc');
    expect(clusterImage('nginx:1', '10.0.0.1:5000')).toBe('nginx:1');
    expect(splitTag('10.0.0.1:5000/svc-build/web:abc')).toEqual(['10.0.0.1:5000/svc-build/web', 'abc']);
    expect(splitTag('10.0.0.1:5000/web')).toEqual(['10.0.0.1:5000/web', 'latest']);
  });
});

describe("svc's own registry configuration", () => {
  it('stores under the given directory and listens on the given address only', async () => {
    const { registryConfig } = await import('../../../src/cluster/registry.js');
    expect(registryConfig({ storageDir: '/data/registry/data', listen: '10.1.0.11:5000' })).toBe(
      ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', '    rootdirectory: "/data/registry/data"', '  delete:', '    enabled: true', 'http:', '  addr: "10.1.0.11:5000"', ''].join('\n'),
    );
  });
});

describe('constrainedNode and dataTask: where a service data is, and which container reads it', () => {
  it('reads the node of a node.id== constraint, ignoring spread constraints', () => {
    expect(constrainedNode(['node.id==w1'])).toBe('w1');
    expect(constrainedNode(['node.id!=a', 'node.id != b'])).toBeUndefined();
    expect(constrainedNode(undefined)).toBeUndefined();
  });

  const task = (id: string, node: string, state: string, created: string, container = `c-${id}`) => ({
    ID: id,
    NodeID: node,
    CreatedAt: created,
    Status: { State: state, ContainerStatus: container ? { ContainerID: container } : undefined },
  });

  it('picks the running task on the node, else the newest with a container there', () => {
    const tasks = [task('old', 'w1', 'shutdown', '2026-01-01T00:00:00Z'), task('run', 'w1', 'running', '2025-01-01T00:00:00Z'), task('m', 'm', 'running', '2027-01-01T00:00:00Z')];
    expect(dataTask(tasks, 'w1')?.ID).toBe('run');
    const stopped = [task('a', 'w1', 'shutdown', '2026-01-01T00:00:00Z'), task('b', 'w1', 'shutdown', '2026-02-01T00:00:00Z'), task('c', 'w1', 'rejected', '2026-03-01T00:00:00Z', '')];
    expect(dataTask(stopped, 'w1')?.ID).toBe('b');
    expect(dataTask(stopped, 'w2')).toBeUndefined();
  });
});

describe('checkContainerPath', () => {
  it.each(['/var/lib/postgresql/data', '/data'])('%s is asked for', (p) => expect(checkContainerPath(p)).toBe(p));
  it.each(['data', '/data/../etc', '/a/./b', '/a b', '/a?x=1', ''])('%s is refused', (p) => expect(() => checkContainerPath(p)).toThrow(/not a plain absolute path/));
});
