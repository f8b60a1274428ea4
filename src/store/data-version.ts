// Has the database changed since I last looked? The proxy pass runs every second and the DNS sync with
// it; with nothing written in between, re-reading every app and rebuilding the routes was most of the
// daemon's idle CPU (docs/decisions/0023-idle-footprint.md). Two counters SQLite keeps answer it for a few
// microseconds: `total_changes()` (rows inserted, updated or deleted through this connection, triggers
// included, only ever growing) and `PRAGMA data_version` (moves when another connection commits).
// A rolled-back write still moves the first, which only costs one needless re-read.
// Writes no such reader depends on (the metrics round, every 10 s) go through `unversioned`, whose rows
// are taken off the count: otherwise each round made every per-second pass read everything again.
import type { Db } from './db.js';

/** Per connection: rows written through `unversioned`, subtracted from total_changes(). */
const unversionedRows = new WeakMap<object, number>();

/** A reader of the database's version: equal answers mean nothing was written in between (but `unversioned` writes). */
export function dataVersion(db: Db): () => string {
  // Rows as objects (no pluck): the statement cache hands the same statement to every caller in default modes.
  const changes = db.$client.prepare('select total_changes() as n');
  const others = db.$client.prepare('pragma data_version');
  return () => `${(changes.get() as { n: number }).n - (unversionedRows.get(db.$client) ?? 0)}:${(others.get() as { data_version: number }).data_version}`;
}

/**
 * Runs a synchronous write that no reader of `dataVersion` depends on (metric samples): it does not move
 * this connection's version. Only for tables those readers never read.
 */
export function unversioned<T>(db: Db, write: () => T): T {
  const total = () => (db.$client.prepare('select total_changes() as n').get() as { n: number }).n;
  const before = total();
  try {
    return write();
  } finally {
    unversionedRows.set(db.$client, (unversionedRows.get(db.$client) ?? 0) + total() - before);
  }
}

/** `read()` again only when the database changed since the last call; what it gave last time otherwise. For reads that depend on the database alone. */
export function whenChanged<T>(db: Db, read: () => T): () => T {
  const version = dataVersion(db);
  let last: { at: string; value: T } | undefined;
  return () => {
    const at = version();
    if (last?.at !== at) last = { at, value: read() };
    return last.value;
  };
}
