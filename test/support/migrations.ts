// A database as an older svc left it, for the tests of a migration that must keep rows: the real migrations
// up to (not including) one tag, on `:memory:` SQLite with foreign keys on, as openDb runs them. The test
// inserts its rows, then runs `migrateKeepingRows(db, MIGRATIONS)` the way the daemon's start does.
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '../../src/store/db.js';

/** The project's migrations folder. */
export const MIGRATIONS = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** A database migrated up to just before `tag` (a temporary copy of the folder with a shortened journal). */
export function dbBefore(tag: string): { sqlite: Database.Database; db: Db } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
  try {
    cpSync(MIGRATIONS, dir, { recursive: true });
    const journalPath = join(dir, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const at = journal.entries.findIndex((e) => e.tag === tag);
    if (at < 0) throw new Error(`no migration ${tag}`);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(journalPath, JSON.stringify(journal));
    const sqlite = new Database(':memory:');
    sqlite.pragma('foreign_keys = ON');
    const db = drizzle(sqlite) as unknown as Db;
    migrate(db, { migrationsFolder: dir });
    return { sqlite, db };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
