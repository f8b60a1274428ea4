// `svc top`: the last metrics round of every app and service (and their containers) and the host, busiest
// first, from GET /api/metrics/top. One shot, like `docker stats --no-stream`.
import type { Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

type Values = { cpu_cores: number | null; memory_bytes: number | null; memory_limit_bytes: number | null; net_rx_bytes_per_second?: number | null; net_tx_bytes_per_second?: number | null; block_read_bytes_per_second?: number | null; block_write_bytes_per_second?: number | null };
type Row = Values & { kind: string; name: string; containers: (Values & { name: string })[] };

const MiB = 1024 * 1024;
const cpu = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
const mem = (v: number | null) => (v === null ? '-' : `${(v / MiB).toFixed(1)}MiB`);
const limit = (v: number | null) => (v === null ? 'unlimited' : mem(v));
const kb = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${(v / 1024).toFixed(1)}kB/s`);

export async function topCommand(client: Client, o: { json?: boolean } = {}): Promise<number> {
  const top = await client.json<{ time: string | null; host: (Values & { disk_used_bytes: number | null; disk_total_bytes: number | null }) | null; subjects: Row[] }>('GET', '/api/metrics/top');
  if (o.json) return printJson(top), 0;
  if (!top.time) {
    process.stdout.write('no metrics yet: the first round is taken 10 s after the daemon starts\n');
    return 0;
  }
  if (top.host) {
    const h = top.host;
    process.stdout.write(`host  cpu ${cpu(h.cpu_cores)}  memory ${mem(h.memory_bytes)} / ${mem(h.memory_limit_bytes)}  disk ${mem(h.disk_used_bytes)} / ${mem(h.disk_total_bytes)}  at ${top.time}\n`);
  }
  const rows = [['NAME', 'KIND', 'CPU', 'MEMORY', 'LIMIT', 'NET IN', 'NET OUT', 'BLOCK R', 'BLOCK W']];
  const line = (name: string, kind: string, v: Values) => [name, kind, cpu(v.cpu_cores), mem(v.memory_bytes), limit(v.memory_limit_bytes), kb(v.net_rx_bytes_per_second), kb(v.net_tx_bytes_per_second), kb(v.block_read_bytes_per_second), kb(v.block_write_bytes_per_second)];
  for (const s of top.subjects) {
    rows.push(line(s.name, s.kind, s));
    if (s.containers.length > 1) for (const c of s.containers) rows.push(line(`  ${c.name}`, 'container', c));
  }
  if (rows.length === 1) process.stdout.write('no app or service is running\n');
  else process.stdout.write(formatTable(rows));
  return 0;
}
