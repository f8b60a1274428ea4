// What a steady-state test compares (DESIGN.md rule 2: reconciling a converged object changes nothing):
// every row of every table, and SQLite's count of rows written on this connection, which also catches a
// write of the same values (rule 7: write only when a value differs).
import type { Db } from '../../src/store/db.js';

/** Every table's rows (migration bookkeeping aside), in rowid order. */
export function dbRows(db: Db): Record<string, unknown[]> {
  const tables = db.$client
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name")
    .all() as { name: string }[];
  const out: Record<string, unknown[]> = {};
  for (const { name } of tables) out[name] = db.$client.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
  return out;
}

/** Rows inserted, updated or deleted on this connection so far (a no-op UPDATE counts too). */
export function dbWrites(db: Db): number {
  return (db.$client.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
}

/** Both at once, for `expect(dbState(db)).toEqual(before)`. */
export function dbState(db: Db) {
  return { writes: dbWrites(db), rows: dbRows(db) };
}
