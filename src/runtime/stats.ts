// The port the metrics collector reads containers through (issue 22 "Metrics"): which containers of this
// instance run, and one reading of a container's cumulative counters. Kept apart from Runtime because only
// the collector needs it; docker-stats.ts implements it over the engine's one-shot stats.

/** A running container of this instance, with its labels (which app or service it belongs to). */
export interface RunningContainer {
  id: string;
  name: string;
  labels: Record<string, string>;
}

/** Cumulative counters of one container at `atMs` (rates come from two readings). */
export interface ContainerCounters {
  atMs: number;
  /** CPU time used since start, nanoseconds. */
  cpuNs: number;
  /** Memory in use without the reclaimable page cache (what `docker stats` shows). */
  memoryBytes: number;
  /** The container's memory cap; null when it has none (the engine then reports the host's memory). */
  memoryLimitBytes: number | null;
  rxBytes: number;
  txBytes: number;
  readBytes: number;
  writeBytes: number;
}

export interface StatsSource {
  /** Running containers labelled as this instance's. */
  running(): Promise<RunningContainer[]>;
  /** One reading; undefined when the container is gone or stopped meanwhile. */
  read(id: string): Promise<ContainerCounters | undefined>;
}
