// StatsSource over the Docker Engine API: a list of running containers, then one `one-shot` stats call per
// container (no long-lived stream per container, no 1 s wait for a second sample: the collector keeps the
// previous reading and makes the rates). Measured in bench/metrics.ts against reading cgroup files.
import type Docker from 'dockerode';
import { totalmem } from 'node:os';
import { LABELS } from './runtime.js';
import { statusOf } from './docker-errors.js';
import type { ContainerCounters, StatsSource } from './stats.js';

interface StatsDoc {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
  blkio_stats?: { io_service_bytes_recursive?: { op: string; value: number }[] | null };
}

/** Pure: the engine's stats document as counters; undefined for a stopped container (no CPU reading). */
export function countersOf(doc: StatsDoc, atMs: number, hostMemory: number): ContainerCounters | undefined {
  const cpuNs = doc.cpu_stats?.cpu_usage?.total_usage;
  const mem = doc.memory_stats;
  if (cpuNs === undefined || mem?.usage === undefined) return undefined;
  // cgroup v1 reports the page cache as total_inactive_file, v2 as inactive_file (docker CLI's rule).
  const cache = mem.stats?.total_inactive_file ?? mem.stats?.inactive_file ?? 0;
  const limit = mem.limit && mem.limit < hostMemory ? mem.limit : null;
  let rx = 0;
  let tx = 0;
  for (const n of Object.values(doc.networks ?? {})) {
    rx += n.rx_bytes ?? 0;
    tx += n.tx_bytes ?? 0;
  }
  let read = 0;
  let write = 0;
  for (const e of doc.blkio_stats?.io_service_bytes_recursive ?? []) {
    const op = e.op.toLowerCase();
    if (op === 'read') read += e.value;
    else if (op === 'write') write += e.value;
  }
  return { atMs, cpuNs, memoryBytes: Math.max(0, mem.usage - (cache < mem.usage ? cache : 0)), memoryLimitBytes: limit, rxBytes: rx, txBytes: tx, readBytes: read, writeBytes: write };
}

export function createDockerStats(docker: Docker, instance: string, now: () => number = Date.now): StatsSource {
  const hostMemory = totalmem();
  return {
    async running() {
      const list = await docker.listContainers({ filters: { label: [`${LABELS.managed}=true`, `${LABELS.instance}=${instance}`], status: ['running'] } });
      return list.map((c) => ({ id: c.Id, name: (c.Names[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }));
    },
    async read(id) {
      try {
        const doc = (await docker.getContainer(id).stats({ stream: false, 'one-shot': true } as { stream: false })) as unknown as StatsDoc;
        return countersOf(doc, now(), hostMemory);
      } catch (err) {
        if (statusOf(err) === 404 || statusOf(err) === 409) return undefined;
        throw err;
      }
    },
  };
}
