// Pure: from two readings of cumulative counters to rates, and from containers to the subjects they belong
// to (an app sums every replica and a deploy's staging container; a service its one container).
import type { MetricValues } from '../store/metrics.js';
import type { ContainerCounters } from '../runtime/stats.js';

export interface ContainerReading {
  id: string;
  name: string;
  subject: string;
  /** An app container's replica slot (its `svc.slot` label); undefined for services. */
  replica?: number;
  counters: ContainerCounters;
}

/**
 * The subject one replica of an app is kept under: `app:<id>/r<slot>`. The `/` keeps `app:1/...` apart
 * from `app:12`, and a prefix range (`app:<id>/r` .. `app:<id>/s`) finds an app's replicas by primary key.
 */
export const replicaSubject = (subject: string, replica: number) => `${subject}/r${replica}`;

export interface ContainerValues {
  name: string;
  subject: string;
  values: MetricValues;
}

const rate = (now: number, before: number, seconds: number) => (now >= before ? (now - before) / seconds : null); // a restart resets counters

/** One container's values: memory as read, rates against its previous reading (null without one). */
export function containerValues(now: ContainerCounters, before: ContainerCounters | undefined): MetricValues {
  const seconds = before ? (now.atMs - before.atMs) / 1000 : 0;
  const has = before !== undefined && seconds > 0;
  return {
    cpu: has ? rate(now.cpuNs / 1e9, before.cpuNs / 1e9, seconds) : null,
    memoryBytes: now.memoryBytes,
    memoryLimitBytes: now.memoryLimitBytes,
    netRxBps: has ? rate(now.rxBytes, before.rxBytes, seconds) : null,
    netTxBps: has ? rate(now.txBytes, before.txBytes, seconds) : null,
    blockReadBps: has ? rate(now.readBytes, before.readBytes, seconds) : null,
    blockWriteBps: has ? rate(now.writeBytes, before.writeBytes, seconds) : null,
    containers: 1,
    diskUsedBytes: null,
    diskTotalBytes: null,
  };
}

const add = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);

/** Sums containers into their subject: memory and rates add up; the limit is null if any is unlimited. */
export function sumValues(list: MetricValues[]): MetricValues {
  const out: MetricValues = { cpu: null, memoryBytes: null, memoryLimitBytes: null, netRxBps: null, netTxBps: null, blockReadBps: null, blockWriteBps: null, containers: 0, diskUsedBytes: null, diskTotalBytes: null };
  let unlimited = false;
  for (const v of list) {
    out.cpu = add(out.cpu, v.cpu);
    out.memoryBytes = add(out.memoryBytes, v.memoryBytes);
    if (v.memoryLimitBytes === null) unlimited = true;
    else out.memoryLimitBytes = add(out.memoryLimitBytes, v.memoryLimitBytes);
    out.netRxBps = add(out.netRxBps, v.netRxBps);
    out.netTxBps = add(out.netTxBps, v.netTxBps);
    out.blockReadBps = add(out.blockReadBps, v.blockReadBps);
    out.blockWriteBps = add(out.blockWriteBps, v.blockWriteBps);
    out.containers = (out.containers ?? 0) + 1;
  }
  if (unlimited) out.memoryLimitBytes = null;
  return out;
}

/**
 * Every container's values, each subject's sum, and (`replicas`) the sum per replica slot of each app that
 * runs more than one replica this round: during a deploy a slot is its old and its new container together,
 * as the app's sum is. Kept apart from `subjects`, which `svc top` and /metrics list.
 */
export function roundOf(readings: ContainerReading[], previous: ReadonlyMap<string, ContainerCounters>) {
  const containers: ContainerValues[] = readings.map((r) => ({ name: r.name, subject: r.subject, values: containerValues(r.counters, previous.get(r.id)) }));
  const bySubject = new Map<string, MetricValues[]>();
  for (const c of containers) bySubject.set(c.subject, [...(bySubject.get(c.subject) ?? []), c.values]);
  const subjects = new Map([...bySubject].map(([s, list]) => [s, sumValues(list)]));
  const multi = new Set(readings.filter((r) => (r.replica ?? 0) > 0).map((r) => r.subject));
  const bySlot = new Map<string, MetricValues[]>();
  readings.forEach((r, i) => {
    if (r.replica === undefined || !multi.has(r.subject)) return;
    const key = replicaSubject(r.subject, r.replica);
    bySlot.set(key, [...(bySlot.get(key) ?? []), containers[i].values]);
  });
  const replicas = new Map([...bySlot].map(([s, list]) => [s, sumValues(list)]));
  return { containers, subjects, replicas };
}
