// drizzle queries built once per database instead of on every call. Building a select (column lists,
// aliases, SQL text) cost more than running it on the hottest paths: the session or token lookup that
// every authenticated request makes. Parameters go in through `sql.placeholder`. The same for the reads
// a deploy repeats most (a deploy by id, an app's open and watched deploys, its observed facts and
// replicas, its preview): a sampling heap profile of 50 deploys (bench:idle --diag-dir) found building
// them about half of everything the daemon allocated meanwhile, garbage that grew its heap.
import type { Db } from './db.js';

/**
 * `build(db)` runs at the first call for a database and its result is kept for that database only
 * (a WeakMap: tests' in-memory databases come and go). For queries with selected fields, which drizzle
 * runs in raw mode explicitly on every call, so sharing the compiled statement is safe.
 */
export function perDb<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let q = built.get(db);
    if (q === undefined) {
      q = build(db);
      built.set(db, q);
    }
    return q;
  };
}
