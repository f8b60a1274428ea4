// What a metrics read answers (API.md "Metrics"): one subject's points over a range from the tier that
// keeps it, in the API's field names, plus the last round's per-container figures. Shared by the REST
// API, the UI's charts and `svc top`.
import type { Db } from '../store/db.js';
import { readMetricRange, type MetricValues } from '../store/metrics.js';
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

export function metricsJson(db: Db, subject: string, range: Range, nowMs: number, latest: MetricsSnapshot | undefined) {
  const { tier, since } = rangeWindow(range, Math.floor(nowMs / 1000));
  const host = subject === 'host';
  return {
    range,
    step_seconds: tier,
    points: readMetricRange(db, subject, tier, since).map((p) => ({ time: iso(p.ts), ...valuesJson(p, host) })),
    containers: host
      ? undefined
      : (latest?.containers ?? []).filter((c) => c.subject === subject).map((c) => ({ name: c.name, ...valuesJson(c.values) })),
  };
}
