// Has the database changed since I last looked? The proxy pass runs every second and the DNS sync with
// it; with nothing written in between, re-reading every app and rebuilding the routes was most of the
// daemon's idle CPU (docs/design.md "Idle footprint"). Two counters SQLite keeps answer it for a few
// microseconds: `total_changes()` (rows inserted, updated or deleted through this connection, triggers
// included, only ever growing) and `PRAGMA data_version` (moves when another connection commits).
// A rolled-back write still moves the first, which only costs one needless re-read.
import type { Db } from './db.js';

/** A reader of the database's version: equal answers mean nothing was written in between. */
export function dataVersion(db: Db): () => string {
  // Rows as objects (no pluck): the statement cache hands the same statement to every caller in default modes.
  const changes = db.$client.prepare('select total_changes() as n');
  const others = db.$client.prepare('pragma data_version');
  return () => `${(changes.get() as { n: number }).n}:${(others.get() as { data_version: number }).data_version}`;
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
