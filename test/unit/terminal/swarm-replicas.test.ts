// A terminal on a Swarm: the app's replicas wherever they run (pure replicasOf over Swarm's documents); a
// replica on another node is reached through its node's agent, and refused with 409 `replica_on_other_node`
// (saying why) only while that agent does not run; a reachable one preferred.
import { describe, expect, it } from 'vitest';
import { pickContainer } from '../../../src/terminal/session.js';
import { replicasOf } from '../../../src/runtime/swarm-terminal.js';
import type { AppContainer, TerminalPort } from '../../../src/runtime/terminal.js';
import type { NodeDoc, ServiceDoc, TaskDoc } from '../../../src/runtime/swarm-map.js';
import { silentLogger } from '../../../src/log.js';
import { memoryDb } from '../../support/db.js';

const svc = (id: string, name: string, slot: number, deploy = 3): ServiceDoc => ({ ID: id, Spec: { Name: name, Labels: { 'svc.slot': String(slot), 'svc.deploy': String(deploy) } } });
const task = (service: string, node: string, state = 'running', created = '2026-11-25T04:00:00Z'): TaskDoc => ({
  ID: `t-${service}-${created}`, ServiceID: service, NodeID: node, CreatedAt: created, DesiredState: state === 'running' ? 'running' : 'shutdown', Status: { State: state, ContainerStatus: { ContainerID: `c-${service}` } },
});
const nodes: NodeDoc[] = [{ ID: 'm', Description: { Hostname: 'box-m' } }, { ID: 'w1', Description: { Hostname: 'box-w1' } }];

describe('replicasOf', () => {
  it('lists running replicas, newest deploy first then by slot, naming the node of those elsewhere', () => {
    const services = [svc('s1', 'x-web-3-r1', 1), svc('s0', 'x-web-3', 0), svc('s2', 'x-web-3-r2', 2), svc('old', 'x-web-2', 0, 2)];
    const tasks = [task('s0', 'm'), task('s1', 'w1'), task('s2', 'w1', 'failed'), task('old', 'm')];
    expect(replicasOf(services, tasks, nodes, 'm')).toEqual([
      { id: 'c-s0', name: 'x-web-3', slot: 0, deployId: 3 },
      { id: 'c-s1', name: 'x-web-3-r1', slot: 1, deployId: 3, node: 'box-w1', nodeId: 'w1' },
      { id: 'c-old', name: 'x-web-2', slot: 0, deployId: 2 },
    ]);
  });
});

describe('pickContainer on a Swarm', () => {
  const port = (list: AppContainer[]): TerminalPort => ({ appContainers: async () => list, open: async () => Promise.reject(new Error('not opened here')) });
  const req = (replica?: number) => ({ app: { id: 1, name: 'web' }, user: { id: 1, username: 'admin', role: 'owner' as const }, via: 'cli' as const, cmd: ['sh'], cols: 80, rows: 24, replica });
  const deps = (list: AppContainer[]) => ({ db: memoryDb(), log: silentLogger, terminal: port(list), now: () => new Date() });
  const why = 'the agent of node box-w1 is not running yet (its task is starting)';
  const onWorker = { id: 'c1', name: 'x-web-3', slot: 0, deployId: 3, node: 'box-w1', nodeId: 'w1' };
  const cutOff = { ...onWorker, unreachable: why };
  const onManager = { id: 'c2', name: 'x-web-3-r1', slot: 1, deployId: 3 };

  it('a replica on a node whose agent runs is taken like one on the manager', async () => {
    expect(await pickContainer(deps([onWorker, onManager]), req(0) as never)).toEqual(onWorker);
    expect(await pickContainer(deps([onWorker, onManager]), req() as never)).toEqual(onWorker);
  });

  it('a replica on a node svc cannot reach now is a 409 replica_on_other_node naming the node and why', async () => {
    await expect(pickContainer(deps([cutOff, onManager]), req(0) as never)).rejects.toMatchObject({ kind: 'conflict', code: 'replica_on_other_node', message: expect.stringContaining(`runs on node box-w1, which svc cannot reach now: ${why}`) });
    await expect(pickContainer(deps([cutOff]), req() as never)).rejects.toMatchObject({ code: 'replica_on_other_node' });
  });

  it('without a replica asked, a reachable one is taken', async () => {
    expect(await pickContainer(deps([cutOff, onManager]), req() as never)).toEqual(onManager);
    expect(await pickContainer(deps([cutOff, onManager]), req(1) as never)).toEqual(onManager);
  });
});
