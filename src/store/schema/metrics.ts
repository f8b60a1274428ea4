import { sqliteTable, integer, text, real, primaryKey, index } from 'drizzle-orm/sqlite-core';

/**
 * Resource use over time (issue 22 "Metrics"): observed state, written only by the metrics collector
 * (src/metrics/collector.ts), one transaction per 10 s round. `subject` is `app:<id>`, `service:<id>` or
 * `host`; `tier` is the bucket width in seconds (10 kept 1 h, 60 kept 24 h, 900 kept 7 d). A row is the
 * running average of the `samples` rounds that fell into its bucket, so downsampling needs no second pass.
 */
export const metricSamples = sqliteTable(
  'metric_samples',
  {
    subject: text('subject').notNull(),
    tier: integer('tier').notNull(),
    /** Bucket start, unix seconds (a multiple of `tier`). */
    ts: integer('ts').notNull(),
    samples: integer('samples').notNull().default(1),
    /** CPU in cores (1.0 = one core busy); null while a container has only one reading (no rate yet). */
    cpu: real('cpu'),
    memoryBytes: real('memory_bytes'),
    /** The sum of the containers' caps; null when any of them is unlimited (the host's total is shown). */
    memoryLimitBytes: real('memory_limit_bytes'),
    netRxBps: real('net_rx_bps'),
    netTxBps: real('net_tx_bps'),
    blockReadBps: real('block_read_bps'),
    blockWriteBps: real('block_write_bps'),
    /** Running containers in the round (the host: null). */
    containers: integer('containers'),
    /** The host only: the data directory's file system. */
    diskUsedBytes: real('disk_used_bytes'),
    diskTotalBytes: real('disk_total_bytes'),
  },
  // The age index makes each round's prune a range seek instead of a scan of every subject's rows.
  (t) => [primaryKey({ columns: [t.subject, t.tier, t.ts] }), index('metric_samples_age_idx').on(t.tier, t.ts)],
);

export type MetricRow = typeof metricSamples.$inferSelect;
