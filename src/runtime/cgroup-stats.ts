// StatsSource from the kernel's own files when the engine runs on this host: a container's cgroup (CPU,
// memory, its cap, block I/O; cgroup v2, or v1 with the cgroupfs or systemd driver) and /proc/<pid>/net/dev
// of its first process (the container's network namespace). bench/metrics.ts measured it at about 1/40 of
// the engine's one-shot stats (which cost dockerd ~2 ms of CPU per container and wait for its 1 s tick).
// A container whose files are not found (the engine elsewhere, another layout) is read through `fallback`.
import type Docker from 'dockerode';
import { existsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { ContainerCounters, StatsSource } from './stats.js';
import { openKernelFile, readKernelFile, type KernelFile } from './kernel-file.js';

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

/** Pure: the value of one `key value` line (memory.stat, cpu.stat), without splitting the whole file (a round reads 50 of each). */
export function keyedValue(text: string, key: string): number | undefined {
  const head = `${key} `;
  const line = text.startsWith(head) ? 0 : text.indexOf(`\n${head}`) + 1;
  if (line === 0 && !text.startsWith(head)) return undefined;
  const start = line + head.length;
  const end = text.indexOf('\n', start);
  return Number(text.slice(start, end < 0 ? undefined : end));
}

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
  // Per container: its files' paths, joined once (a round reads six files of each of 50 containers), and its
  // five cgroup files held open from its first reading on (read again at offset 0: kernel-file.ts), closed
  // when it is no longer listed or a read fails. net/dev is opened each time: an open /proc/<pid>/net file
  // keeps reading the network namespace it was opened in, also after that process is gone.
  type Known = { v: 1 | 2; files: string[]; pid: number; open?: (KernelFile | undefined)[] };
  const known = new Map<string, Known | null>();
  const forget = (id: string) => {
    for (const f of known.get(id)?.open ?? []) f?.close();
    known.delete(id);
  };
  /** Opens the cgroup files (io.stat may be missing: undefined, read as empty). */
  const opened = (k: Known) =>
    (k.open ??= k.files.slice(0, 5).map((path, i) => {
      try {
        return openKernelFile(path);
      } catch (err) {
        if (i === 4) return undefined;
        throw err;
      }
    }));
  // Synchronous on purpose: these are kernel pseudo-files answered from memory (a few µs, never a disk
  // wait); an async read costs four thread-pool round trips each, which measured as most of the round's CPU.
  // Into one reused buffer (kernel-file.ts) rather than a fresh allocation per file.
  const text = readKernelFile;

  async function locate(id: string) {
    if (!known.has(id)) {
      const p = cgroupPaths(id, root);
      const pid = p ? ((await docker.getContainer(id).inspect().catch(() => undefined))?.State?.Pid ?? 0) : 0;
      // In the order read() takes them: cpu, memory usage, memory cap, memory.stat, block I/O, net/dev.
      const files = !p
        ? []
        : p.v === 2
          ? [...['cpu.stat', 'memory.current', 'memory.max', 'memory.stat', 'io.stat'].map((f) => join(p.dir, f)), `/proc/${pid}/net/dev`]
          : [join(p.cpu, 'cpuacct.usage'), join(p.memory, 'memory.usage_in_bytes'), join(p.memory, 'memory.limit_in_bytes'), join(p.memory, 'memory.stat'), join(p.blkio, 'blkio.throttle.io_service_bytes'), `/proc/${pid}/net/dev`];
      known.set(id, p && pid > 0 ? { v: p.v, files, pid } : null);
    }
    return known.get(id);
  }

  return {
    async running() {
      const list = await fallback.running();
      const live = new Set(list.map((c) => c.id));
      for (const id of [...known.keys()]) if (!live.has(id)) forget(id); // a stopped container's pid and files are stale
      return list;
    },
    async read(id): Promise<ContainerCounters | undefined> {
      const where = await locate(id);
      if (!where) return fallback.read(id);
      try {
        const { v, files } = where;
        const at = now();
        const [cpu, usageFile, limitFile, stat, ioFile] = opened(where);
        const net = netDev(text(files[5]));
        const io = (() => {
          try {
            return ioFile?.read() ?? '';
          } catch {
            return '';
          }
        })();
        const usage = Number(usageFile!.read());
        const max = limitFile!.read().trim();
        const b = blockIo(io, v);
        if (v === 2) {
          const cache = keyedValue(stat!.read(), 'inactive_file') ?? 0;
          const limit = max === 'max' ? null : Number(max);
          return { atMs: at, cpuNs: (keyedValue(cpu!.read(), 'usage_usec') ?? 0) * 1000, memoryBytes: Math.max(0, usage - (cache < usage ? cache : 0)), memoryLimitBytes: limit !== null && limit < hostMemory ? limit : null, rxBytes: net.rx, txBytes: net.tx, readBytes: b.read, writeBytes: b.write };
        }
        const cache = keyedValue(stat!.read(), 'total_inactive_file') ?? 0;
        const limit = Number(max);
        return { atMs: at, cpuNs: Number(cpu!.read()), memoryBytes: Math.max(0, usage - (cache < usage ? cache : 0)), memoryLimitBytes: limit < hostMemory ? limit : null, rxBytes: net.rx, txBytes: net.tx, readBytes: b.read, writeBytes: b.write };
      } catch {
        // The container stopped between the list and the read (or was restarted: new cgroup files, new pid).
        forget(id);
        return undefined;
      }
    },
  };
}
