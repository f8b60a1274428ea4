// Rows of metric_samples (schema/metrics.ts): one round written in one transaction (each value folded into
// its 10 s, 1 min and 15 min bucket as a running average, then anything older than its tier keeps is
// pruned), and a range read by primary key. No rules here: the tiers come from the caller.
import type Database from 'better-sqlite3';
import type { Db } from './db.js';

/** One subject's reading of a round; null: not known this round (a first reading has no rate yet). */
export interface MetricValues {
  cpu: number | null;
  memoryBytes: number | null;
  memoryLimitBytes: number | null;
  netRxBps: number | null;
  netTxBps: number | null;
  blockReadBps: number | null;
  blockWriteBps: number | null;
  containers: number | null;
  diskUsedBytes: number | null;
  diskTotalBytes: number | null;
}

export interface MetricPoint extends MetricValues {
  /** Bucket start, unix seconds. */
  ts: number;
}

/** A tier: bucket width and how long its rows are kept, both in seconds. */
export interface Tier {
  seconds: number;
  keepSeconds: number;
}

const COLUMNS = ['cpu', 'memory_bytes', 'memory_limit_bytes', 'net_rx_bps', 'net_tx_bps', 'block_read_bps', 'block_write_bps', 'containers', 'disk_used_bytes', 'disk_total_bytes'] as const;
const KEYS: (keyof MetricValues)[] = ['cpu', 'memoryBytes', 'memoryLimitBytes', 'netRxBps', 'netTxBps', 'blockReadBps', 'blockWriteBps', 'containers', 'diskUsedBytes', 'diskTotalBytes'];

// A null reading leaves the average as it is; the first known value replaces a null one.
const fold = (c: string) => `${c} = CASE WHEN excluded.${c} IS NULL THEN ${c} WHEN ${c} IS NULL THEN excluded.${c} ELSE (${c} * samples + excluded.${c}) / (samples + 1) END`;
const UPSERT =
  `INSERT INTO metric_samples (subject, tier, ts, samples, ${COLUMNS.join(', ')}) VALUES (?, ?, ?, 1, ${COLUMNS.map(() => '?').join(', ')}) ` +
  `ON CONFLICT (subject, tier, ts) DO UPDATE SET ${COLUMNS.map(fold).join(', ')}, samples = samples + 1`;

const statements = new WeakMap<Database.Database, { upsert: Database.Statement; prune: Database.Statement; range: Database.Statement }>();
function prepared(db: Db) {
  let s = statements.get(db.$client);
  if (!s) {
    s = {
      upsert: db.$client.prepare(UPSERT),
      prune: db.$client.prepare('DELETE FROM metric_samples WHERE tier = ? AND ts < ?'),
      range: db.$client.prepare(`SELECT ts, ${COLUMNS.join(', ')} FROM metric_samples WHERE subject = ? AND tier = ? AND ts >= ? ORDER BY ts`),
    };
    statements.set(db.$client, s);
  }
  return s;
}

/**
 * Writes one round (every subject's values at `atSeconds`) into every tier, then drops rows past their
 * tier's keep: one transaction, so a reader never sees half a round.
 */
export function writeMetricRound(db: Db, rows: { subject: string; values: MetricValues }[], atSeconds: number, tiers: readonly Tier[]): void {
  const s = prepared(db);
  db.$client.transaction(() => {
    for (const { subject, values } of rows) {
      const v = KEYS.map((k) => values[k]);
      for (const t of tiers) s.upsert.run(subject, t.seconds, atSeconds - (atSeconds % t.seconds), ...v);
    }
    for (const t of tiers) s.prune.run(t.seconds, atSeconds - t.keepSeconds);
  })();
}

/** The points of one subject in one tier from `sinceSeconds` on, oldest first. */
export function readMetricRange(db: Db, subject: string, tier: number, sinceSeconds: number): MetricPoint[] {
  const rows = prepared(db).range.all(subject, tier, sinceSeconds) as Record<string, number | null>[];
  return rows.map((r) => {
    const p = { ts: r.ts as number } as MetricPoint;
    COLUMNS.forEach((c, i) => ((p as unknown as Record<string, number | null>)[KEYS[i]] = r[c]));
    return p;
  });
}

/** The subjects of one tier from `sinceSeconds` on whose name starts with `prefix` (an app's replicas), sorted. */
export function subjectsWithPrefix(db: Db, prefix: string, tier: number, sinceSeconds: number): string[] {
  // A range on the primary key's first column: `prefix` .. `prefix` + U+FFFF, no scan of other subjects.
  const rows = db.$client
    .prepare('SELECT DISTINCT subject FROM metric_samples WHERE subject >= ? AND subject < ? AND tier = ? AND ts >= ? ORDER BY subject')
    .all(prefix, `${prefix}\uffff`, tier, sinceSeconds) as { subject: string }[];
  return rows.map((r) => r.subject);
}

/** Removes every row of a subject (an app or service deleted). */
export function dropMetricSubject(db: Db, subject: string): void {
  db.$client.prepare('DELETE FROM metric_samples WHERE subject = ?').run(subject);
}

/** Display names of the subjects metrics are kept for: `app:<id>` and `service:<id>` -> name. */
export function subjectNames(db: Db): Map<string, { kind: 'app' | 'service'; name: string }> {
  const out = new Map<string, { kind: 'app' | 'service'; name: string }>();
  for (const r of db.$client.prepare('SELECT id, name FROM apps').all() as { id: number; name: string }[]) out.set(`app:${r.id}`, { kind: 'app', name: r.name });
  for (const r of db.$client.prepare('SELECT id, name FROM services').all() as { id: number; name: string }[]) out.set(`service:${r.id}`, { kind: 'service', name: r.name });
  return out;
}
