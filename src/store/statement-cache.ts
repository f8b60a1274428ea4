// A bounded cache of compiled SQLite statements, keyed by SQL text. drizzle calls `prepare()` for every
// query it runs, and SQLite compiling the same text again was the largest single cost of a simple read
// (a third of `GET /api/apps/{id}`, most of a reconcile pass that only reads its app). The texts drizzle
// builds are few (parameters are bound, not inlined), so a small cache keeps nearly all of them.
import type Database from 'better-sqlite3';

/** Enough for every query shape the daemon has (about 150) with room; `inArray` lists of many lengths evict. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Makes `db.prepare(sql)` hand out a cached statement for a text seen before. Each hand-out returns the
 * statement in its default modes (not raw, pluck or expanded), so callers cannot tell it from a fresh
 * one; a statement still being iterated is never handed out twice (a fresh one is compiled instead).
 * Least recently used texts are dropped beyond `max`.
 */
export function cacheStatements(db: Database.Database, max = STATEMENT_CACHE_SIZE): void {
  const compile = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((source: string) => {
    const hit = cache.get(source);
    if (hit && !hit.busy) {
      cache.delete(source);
      cache.set(source, hit);
      if (hit.reader) hit.raw(false).pluck(false).expand(false);
      return hit;
    }
    const stmt = compile(source);
    if (!hit) {
      cache.set(source, stmt);
      if (cache.size > max) cache.delete(cache.keys().next().value!);
    }
    return stmt;
  }) as Database.Database['prepare'];
}
