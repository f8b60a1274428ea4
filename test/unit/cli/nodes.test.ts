import { describe, expect, it } from 'vitest';
import { nodeEventsTable, nodesTable } from '../../../src/cli/nodes.js';
import { nodeList } from '../../../src/cluster/nodes.js';
import type { NodeView } from '../../../src/runtime/runtime.js';

const view = (id: string, hostname: string, role: 'manager' | 'worker', state = 'ready'): NodeView => ({
  id, hostname, address: `10.1.0.${id.length}`, role, leader: role === 'manager', availability: 'active', state, labels: {}, engineVersion: '20.10.24', cpus: 2, memoryMb: 2048,
});

describe('svc nodes events', () => {
  it('prints the events newest first, or says there are none', () => {
    expect(nodeEventsTable([])).toBe('no node went down so far\n');
    expect(nodeEventsTable([
      { id: 2, node_id: 'w1', hostname: 'box-w1', kind: 'up', state: 'ready', at: '2026-11-25T04:12:09.113Z' },
      { id: 1, node_id: 'w1', hostname: 'box-w1', kind: 'down', state: 'down', at: '2026-11-25T04:10:51.020Z' },
    ])).toBe(
      'TIME                      HOSTNAME  EVENT        STATE\n' +
        '2026-11-25T04:12:09.113Z  box-w1    ready again  ready\n' +
        '2026-11-25T04:10:51.020Z  box-w1    down         down\n',
    );
  });
});

describe('node view and table', () => {
  it('joins each node with the replicas running there, managers first', () => {
    const list = nodeList([view('w2abcdefghijklmn', 'b', 'worker', 'down'), view('m1', 'm', 'manager')], new Map<string, { name: string; labels: Record<string, string> }[]>([
      ['w2abcdefghijklmn', [{ name: 'svc-x-web-3-r1', labels: { 'svc.app': 'web' } }]],
      ['m1', [{ name: 'svc-x-db', labels: { 'svc.service': 'db' } }, { name: 'svc-x-web-3', labels: { 'svc.app': 'web' } }]],
    ]));
    expect(list.map((n) => [n.hostname, n.replicas])).toEqual([
      ['m', [{ app: undefined, service: 'db', container: 'svc-x-db' }, { app: 'web', service: undefined, container: 'svc-x-web-3' }]],
      ['b', [{ app: 'web', service: undefined, container: 'svc-x-web-3-r1' }]],
    ]);
    expect(nodesTable(list)).toBe(
      'ID            HOSTNAME  ADDRESS    ROLE              STATE  AVAILABILITY  CPUS  MEMORY    REPLICAS\n' +
        'm1            m         10.1.0.2   manager (leader)  ready  active        2     2048 MiB  db,web\n' +
        'w2abcdefghij  b         10.1.0.16  worker            down   active        2     2048 MiB  web\n',
    );
  });
});
