// The Prometheus exposition of the collector's last round (issue 22), through prom-client: one registry per
// daemon (no global one), gauges filled when scraped, so a scrape never asks the engine anything.
import { Gauge, Registry } from 'prom-client';
import type { MetricValues } from '../store/metrics.js';
import type { MetricsSnapshot } from './collector.js';

type Named = Map<string, { kind: 'app' | 'service'; name: string }>;

const FIELDS: [keyof MetricValues, string, string][] = [
  ['cpu', 'svc_cpu_cores', 'CPU in use, in cores, averaged over the last round'],
  ['memoryBytes', 'svc_memory_bytes', 'Memory in use without reclaimable page cache'],
  ['memoryLimitBytes', 'svc_memory_limit_bytes', 'Memory cap (the host: its total memory); absent when unlimited'],
  ['netRxBps', 'svc_network_receive_bytes_per_second', 'Network bytes received per second'],
  ['netTxBps', 'svc_network_transmit_bytes_per_second', 'Network bytes sent per second'],
  ['blockReadBps', 'svc_block_read_bytes_per_second', 'Block device bytes read per second'],
  ['blockWriteBps', 'svc_block_write_bytes_per_second', 'Block device bytes written per second'],
  ['containers', 'svc_containers', 'Running containers'],
  ['diskUsedBytes', 'svc_disk_used_bytes', "Used bytes of the data directory's file system"],
  ['diskTotalBytes', 'svc_disk_total_bytes', "Size of the data directory's file system"],
];

/** A registry whose gauges read `snapshot()` and `names()` at each scrape. */
export function createPrometheus(snapshot: () => MetricsSnapshot | undefined, names: () => Named): Registry {
  const registry = new Registry();
  // Registered first: the registry collects in order, and this one fills the others for the scrape.
  new Gauge({
    name: 'svc_metrics_round_timestamp_seconds',
    help: 'When the last metrics round was taken',
    registers: [registry],
    collect() {
      const snap = snapshot();
      const named = names();
      for (const g of [...gauges, ...perContainer]) g.gauge.reset();
      if (!snap) return;
      this.set(snap.atMs / 1000);
      const labelsOf = (subject: string) => (subject === 'host' ? { kind: 'host', name: 'host' } : named.get(subject));
      for (const [subject, values] of snap.subjects) {
        const labels = labelsOf(subject);
        if (!labels) continue;
        for (const { key, gauge } of gauges) {
          const v = values[key];
          if (v !== null) gauge.set({ kind: labels.kind, name: labels.name }, v);
        }
      }
      for (const c of snap.containers) {
        const labels = labelsOf(c.subject);
        if (!labels) continue;
        for (const { key, gauge } of perContainer) {
          const v = c.values[key];
          if (v !== null) gauge.set({ kind: labels.kind, name: labels.name, container: c.name }, v);
        }
      }
    },
  });
  const gauges = FIELDS.map(([key, name, help]) => ({ key, gauge: new Gauge({ name, help, labelNames: ['kind', 'name'], registers: [registry] }) }));
  const perContainer = [
    { key: 'cpu' as const, gauge: new Gauge({ name: 'svc_container_cpu_cores', help: 'CPU of one container, in cores', labelNames: ['kind', 'name', 'container'], registers: [registry] }) },
    { key: 'memoryBytes' as const, gauge: new Gauge({ name: 'svc_container_memory_bytes', help: 'Memory of one container', labelNames: ['kind', 'name', 'container'], registers: [registry] }) },
  ];
  return registry;
}
