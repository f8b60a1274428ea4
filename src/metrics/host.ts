// The host's own figures for the dashboard: CPU from the kernel's cumulative times (two readings make a
// rate, as for containers), memory in use (total minus available) and the data directory's file system.
import { cpus, freemem, totalmem } from 'node:os';
import { statfs } from 'node:fs/promises';
import type { MetricValues } from '../store/metrics.js';

export interface HostReading {
  atMs: number;
  /** Busy CPU time of all cores, ms. */
  busyMs: number;
  memoryBytes: number;
  memoryTotalBytes: number;
  diskUsedBytes: number | null;
  diskTotalBytes: number | null;
}

export async function readHost(dataDir: string, atMs: number): Promise<HostReading> {
  let busyMs = 0;
  for (const c of cpus()) busyMs += c.times.user + c.times.nice + c.times.sys + c.times.irq;
  let diskUsedBytes: number | null = null;
  let diskTotalBytes: number | null = null;
  try {
    const s = await statfs(dataDir);
    diskTotalBytes = s.blocks * s.bsize;
    diskUsedBytes = (s.blocks - s.bfree) * s.bsize;
  } catch {
    /* the data directory is gone or unreadable: the disk figures stay unknown */
  }
  return { atMs, busyMs, memoryBytes: totalmem() - freemem(), memoryTotalBytes: totalmem(), diskUsedBytes, diskTotalBytes };
}

/** Pure: the host's values of a round; CPU in cores busy since the previous reading. */
export function hostValues(now: HostReading, before: HostReading | undefined): MetricValues {
  const seconds = before ? (now.atMs - before.atMs) / 1000 : 0;
  const cpu = before && seconds > 0 && now.busyMs >= before.busyMs ? (now.busyMs - before.busyMs) / 1000 / seconds : null;
  return {
    cpu,
    memoryBytes: now.memoryBytes,
    memoryLimitBytes: now.memoryTotalBytes,
    netRxBps: null,
    netTxBps: null,
    blockReadBps: null,
    blockWriteBps: null,
    containers: null,
    diskUsedBytes: now.diskUsedBytes,
    diskTotalBytes: now.diskTotalBytes,
  };
}
