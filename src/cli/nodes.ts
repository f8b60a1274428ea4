// `svc nodes`: the machines apps run on (issue 19). `svc nodes` lists them with the replicas on each,
// `svc nodes join [--manager]` prints the exact `docker swarm join` command for a new machine, and
// `svc nodes events` lists the nodes that went down and came back, `svc nodes drain|activate NODE` and `svc nodes label NODE KEY=VALUE...` change a node. Thin calls of the
// nodes endpoints (API.md "Nodes").
import { CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';
import type { NodeJson } from '../cluster/nodes.js';

/** Pure: the table `svc nodes` prints. */
export function nodesTable(nodes: NodeJson[]): string {
  const rows = [
    ['ID', 'HOSTNAME', 'ADDRESS', 'ROLE', 'STATE', 'AVAILABILITY', 'CPUS', 'MEMORY', 'REPLICAS'],
    ...nodes.map((n) => [
      n.id.slice(0, 12),
      n.hostname,
      n.address || '-',
      n.role + (n.leader ? ' (leader)' : ''),
      n.state,
      n.availability,
      String(n.cpus),
      `${n.memory_mb} MiB`,
      n.replicas.map((r) => r.app ?? r.service ?? r.container).join(',') || '-',
    ]),
  ];
  return formatTable(rows);
}

/** A node event as GET /api/nodes/events answers it. */
export interface NodeEventJson {
  id: number;
  node_id: string;
  hostname: string;
  kind: 'down' | 'up';
  state: string;
  at: string;
}

/** Pure: the table `svc nodes events` prints (newest first, as the API answers). */
export function nodeEventsTable(events: NodeEventJson[]): string {
  if (events.length === 0) return 'no node went down so far\n';
  return formatTable([['TIME', 'HOSTNAME', 'EVENT', 'STATE'], ...events.map((e) => [e.at, e.hostname, e.kind === 'down' ? 'down' : 'ready again', e.state])]);
}

export async function nodesCommand(client: Client, o: { action?: string; args: string[]; manager: boolean; json?: boolean }): Promise<number> {
  switch (o.action ?? 'list') {
    case 'list':
    case 'ls':
    case 'events': {
      const list = o.action === 'events' ? await client.json<NodeEventJson[]>('GET', '/api/nodes/events') : await client.json<NodeJson[]>('GET', '/api/nodes');
      if (o.json) printJson(list);
      else process.stdout.write(o.action === 'events' ? nodeEventsTable(list as NodeEventJson[]) : nodesTable(list as NodeJson[]));
      return 0;
    }
    case 'join': {
      const r = await client.json<{ command_line: string; role: string }>('POST', '/api/nodes/join', { role: o.manager ? 'manager' : 'worker' });
      process.stdout.write(`run this on the new machine to join it as a ${r.role}:\n  ${r.command_line}\n`);
      return 0;
    }
    case 'drain':
    case 'activate': {
      if (o.args.length !== 1) throw new CliError(`svc nodes ${o.action} NODE`, 2);
      const n = await client.json<NodeJson>('PUT', `/api/nodes/${encodeURIComponent(o.args[0]!)}`, { availability: o.action === 'drain' ? 'drain' : 'active' });
      process.stdout.write(`${n.hostname}: ${n.availability}\n`);
      return 0;
    }
    case 'label': {
      const [node, ...pairs] = o.args;
      if (!node || pairs.length === 0) throw new CliError('svc nodes label NODE KEY=VALUE... (KEY= removes it)', 2);
      const current = (await client.json<NodeJson[]>('GET', '/api/nodes')).find((n) => n.id === node || n.hostname === node);
      if (!current) throw new CliError(`no node ${node}`);
      const labels = { ...current.labels };
      for (const p of pairs) {
        const i = p.indexOf('=');
        if (i <= 0) throw new CliError(`expected KEY=VALUE, got "${p}"`, 2);
        const [k, v] = [p.slice(0, i), p.slice(i + 1)];
        if (v === '') delete labels[k];
        else labels[k] = v;
      }
      const n = await client.json<NodeJson>('PUT', `/api/nodes/${encodeURIComponent(current.id)}`, { labels });
      process.stdout.write(`${n.hostname}: ${Object.entries(n.labels).map(([k, v]) => `${k}=${v}`).join(' ') || 'no labels'}\n`);
      return 0;
    }
    default:
      throw new CliError(`unknown nodes action "${o.action}": list, events, join, drain, activate or label`, 2);
  }
}
