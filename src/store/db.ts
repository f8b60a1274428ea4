// Opens the embedded SQLite database with the settings the daemon relies on (WAL so readers never block
// the writer, foreign keys for cascades, a busy timeout for the backup snapshot) and runs migrations.
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as schema from './schema/index.js';
import { cacheStatements } from './statement-cache.js';
import { teamsFixup } from './teams-fixup.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Opens (creating if needed) the database at `path` (or `:memory:`) and brings its schema up to date. */
export function openDb(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  if (path !== ':memory:') sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  cacheStatements(sqlite);
  const db = drizzle(sqlite, { schema }) as Db;
  migrateKeepingRows(db, migrationsFolder);
  teamsFixup(db);
  return db;
}

/**
 * Runs the migrations with foreign keys off, on again after. drizzle runs them inside one transaction, where
 * the `PRAGMA foreign_keys=OFF` a generated table rebuild starts with is a no-op; its `DROP TABLE apps` would
 * then cascade and empty every child table (deploys, env, links, events). Off outside the transaction, the
 * rebuild copies the rows and the children keep pointing at the same ids.
 */
export function migrateKeepingRows(db: Db, folder: string): void {
  db.$client.pragma('foreign_keys = OFF');
  try {
    migrate(db, { migrationsFolder: folder });
  } finally {
    db.$client.pragma('foreign_keys = ON');
  }
}

/** Runs `fn` in one SQLite transaction (better-sqlite3 transactions are synchronous). */
export function tx<T>(db: Db, fn: () => T): T {
  return db.$client.transaction(fn)();
}
