// StatsSource from the kernel's own files when the engine runs on this host: a container's cgroup (CPU,
// memory, its cap, block I/O; cgroup v2, or v1 with the cgroupfs or systemd driver) and /proc/<pid>/net/dev
// of its first process (the container's network namespace). bench/metrics.ts measured it at about 1/40 of
// the engine's one-shot stats (which cost dockerd ~2 ms of CPU per container and wait for its 1 s tick).
// A container whose files are not found (the engine elsewhere, another layout) is read through `fallback`.
import type Docker from 'dockerode';
import { existsSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { ContainerCounters, StatsSource } from './stats.js';

const ROOT = '/sys/fs/cgroup';

/** Where one container's cgroup files are; undefined when none of the known layouts has them. */
export function cgroupPaths(id: string, root = ROOT): { v: 2; dir: string } | { v: 1; cpu: string; memory: string; blkio: string } | undefined {
  for (const dir of [join(root, 'system.slice', `docker-${id}.scope`), join(root, 'docker', id)]) if (existsSync(join(dir, 'cpu.stat'))) return { v: 2, dir };
  for (const sub of [join('docker', id), join('system.slice', `docker-${id}.scope`)]) {
    const cpu = join(root, 'cpuacct', sub);
    if (existsSync(join(cpu, 'cpuacct.usage'))) return { v: 1, cpu, memory: join(root, 'memory', sub), blkio: join(root, 'blkio', sub) };
  }
  return undefined;
}

/** Pure: `key value` lines (memory.stat, cpu.stat) as a map. */
export const keyed = (text: string): Map<string, number> => new Map(text.split('\n').flatMap((l) => { const [k, v] = l.split(' '); return k && v !== undefined ? [[k, Number(v)] as [string, number]] : []; }));

/** Pure: received and sent bytes of every interface but loopback, from /proc/<pid>/net/dev. */
export function netDev(text: string): { rx: number; tx: number } {
  let rx = 0;
  let tx = 0;
  for (const line of text.split('\n').slice(2)) {
    const [name, rest] = line.split(':');
    if (!rest || name.trim() === 'lo') continue;
    const f = rest.trim().split(/\s+/).map(Number);
    rx += f[0] ?? 0;
    tx += f[8] ?? 0;
  }
  return { rx, tx };
}

/** Pure: block bytes read and written, from v1 blkio.throttle.io_service_bytes or v2 io.stat. */
export function blockIo(text: string, v: 1 | 2): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const line of text.split('\n')) {
    if (v === 1) {
      const [, op, n] = line.split(' ');
      if (op === 'Read') read += Number(n);
      else if (op === 'Write') write += Number(n);
    } else {
      read += Number(/rbytes=(\d+)/.exec(line)?.[1] ?? 0);
      write += Number(/wbytes=(\d+)/.exec(line)?.[1] ?? 0);
    }
  }
  return { read, write };
}

export function createCgroupStats(docker: Docker, fallback: StatsSource, now: () => number = Date.now, root = ROOT): StatsSource {
  const hostMemory = totalmem();
  const known = new Map<string, { paths: NonNullable<ReturnType<typeof cgroupPaths>>; pid: number } | null>();
  // Synchronous on purpose: these are kernel pseudo-files answered from memory (a few µs, never a disk
  // wait); an async read costs four thread-pool round trips each, which measured as most of the round's CPU.
  const text = async (p: string) => readFileSync(p, 'utf8');

  async function locate(id: string) {
    if (!known.has(id)) {
      const paths = cgroupPaths(id, root);
      const pid = paths ? ((await docker.getContainer(id).inspect().catch(() => undefined))?.State?.Pid ?? 0) : 0;
      known.set(id, paths && pid > 0 ? { paths, pid } : null);
    }
    return known.get(id);
  }

  return {
    async running() {
      const list = await fallback.running();
      const live = new Set(list.map((c) => c.id));
      for (const id of known.keys()) if (!live.has(id)) known.delete(id); // a stopped container's pid is stale
      return list;
    },
    async read(id): Promise<ContainerCounters | undefined> {
      const where = await locate(id);
      if (!where) return fallback.read(id);
      try {
        const { paths: p, pid } = where;
        const at = now();
        const net = netDev(await text(`/proc/${pid}/net/dev`));
        if (p.v === 2) {
          const [cpu, current, max, stat, io] = await Promise.all([text(join(p.dir, 'cpu.stat')), text(join(p.dir, 'memory.current')), text(join(p.dir, 'memory.max')), text(join(p.dir, 'memory.stat')), text(join(p.dir, 'io.stat')).catch(() => '')]);
          const usage = Number(current);
          const cache = keyed(stat).get('inactive_file') ?? 0;
          const limit = max.trim() === 'max' ? null : Number(max);
          const b = blockIo(io, 2);
          return { atMs: at, cpuNs: (keyed(cpu).get('usage_usec') ?? 0) * 1000, memoryBytes: Math.max(0, usage - (cache < usage ? cache : 0)), memoryLimitBytes: limit !== null && limit < hostMemory ? limit : null, rxBytes: net.rx, txBytes: net.tx, readBytes: b.read, writeBytes: b.write };
        }
        const [cpu, usageText, limitText, stat, io] = await Promise.all([text(join(p.cpu, 'cpuacct.usage')), text(join(p.memory, 'memory.usage_in_bytes')), text(join(p.memory, 'memory.limit_in_bytes')), text(join(p.memory, 'memory.stat')), text(join(p.blkio, 'blkio.throttle.io_service_bytes')).catch(() => '')]);
        const usage = Number(usageText);
        const cache = keyed(stat).get('total_inactive_file') ?? 0;
        const limit = Number(limitText);
        const b = blockIo(io, 1);
        return { atMs: at, cpuNs: Number(cpu), memoryBytes: Math.max(0, usage - (cache < usage ? cache : 0)), memoryLimitBytes: limit < hostMemory ? limit : null, rxBytes: net.rx, txBytes: net.tx, readBytes: b.read, writeBytes: b.write };
      } catch {
        // The container stopped between the list and the read: its files are gone.
        known.delete(id);
        return undefined;
      }
    },
  };
}
