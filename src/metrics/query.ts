// What a metrics read answers (API.md "Metrics"): one subject's points over a range from the tier that
// keeps it, in the API's field names, plus the last round's per-container figures. Shared by the REST
// API, the UI's charts and `svc top`.
import type { Db } from '../store/db.js';
import { readMetricRange, subjectsWithPrefix, type MetricValues } from '../store/metrics.js';
import { replicaSubject } from './rates.js';
import type { MetricsSnapshot } from './collector.js';
import { rangeWindow, type Range } from './tiers.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The API's names for one set of values. */
export function valuesJson(v: MetricValues, host = false) {
  return {
    cpu_cores: v.cpu,
    memory_bytes: v.memoryBytes,
    memory_limit_bytes: v.memoryLimitBytes,
    ...(host
      ? { disk_used_bytes: v.diskUsedBytes, disk_total_bytes: v.diskTotalBytes }
      : {
          net_rx_bytes_per_second: v.netRxBps,
          net_tx_bytes_per_second: v.netTxBps,
          block_read_bytes_per_second: v.blockReadBps,
          block_write_bytes_per_second: v.blockWriteBps,
          containers: v.containers,
        }),
  };
}

/**
 * One subject's points over `range`; `byReplica` (an app) adds `replicas`: the points of each replica slot
 * kept in that range (slots are kept while the app runs more than one replica), by slot.
 */
export function metricsJson(db: Db, subject: string, range: Range, nowMs: number, latest: MetricsSnapshot | undefined, opts: { byReplica?: boolean } = {}) {
  const { tier, since } = rangeWindow(range, Math.floor(nowMs / 1000));
  const host = subject === 'host';
  const pointsOf = (s: string) => readMetricRange(db, s, tier, since).map((p) => ({ time: iso(p.ts), ...valuesJson(p, host) }));
  const prefix = replicaSubject(subject, 0).slice(0, -1);
  return {
    range,
    step_seconds: tier,
    points: pointsOf(subject),
    containers: host
      ? undefined
      : (latest?.containers ?? []).filter((c) => c.subject === subject).map((c) => ({ name: c.name, ...valuesJson(c.values) })),
    ...(opts.byReplica
      ? {
          replicas: subjectsWithPrefix(db, prefix, tier, since)
            .map((s) => ({ replica: Number(s.slice(prefix.length)), points: pointsOf(s) }))
            .filter((r) => Number.isInteger(r.replica))
            .sort((a, b) => a.replica - b.replica),
        }
      : {}),
  };
}
