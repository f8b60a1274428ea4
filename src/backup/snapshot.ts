// The database half of a restore. `prepareSnapshot` checks an archive's svc.db (integrity, a svc schema
// no newer than ours, the same encryption key) and brings it to our schema. `replaceState` then puts its
// rows into the live database in ONE transaction, behind the same `Db` object every part of the daemon
// holds (no reopen, no restart): ATTACH the snapshot, delete and copy every table, commit or roll back.
// Kept from the live database: the backup records (API.md: a restore does not roll them back) and the
// sessions and API tokens of users the snapshot also has (same id and username), so the caller stays
// logged in when the restored users include them.
import Database from 'better-sqlite3';
import type { Sealer } from '../crypto.js';
import { openDb, type Db } from '../store/db.js';
import { verifyEncryptionKey, EncryptionKeyError } from '../store/encryption-check.js';
import { ArchiveError } from './extract-archive.js';

/** The snapshot was sealed with another SVC_ENCRYPTION_KEY: a live restore would make its secrets unreadable. */
export class KeyMismatchError extends Error {}

// The backup aggregate's operations (restores, imports) are records of this host, like the backups. So are
// the node changes asked of its Swarm (Swarm holds the nodes; an archive's old request must not be re-applied),
// and the per-service backups, whose files under service-backups/ a full restore does not touch.
const KEEP_LIVE = new Set(['backups', 'restores', 'imports', 'backup_targets', 'backup_uploads', 'node_specs', 'node_spec_status', 'service_backups', 'service_backup_uploads', 'service_restores', '__drizzle_migrations']);
const KEEP_LIVE_OF_USERS = ['sessions', 'api_tokens'];

/** Validates and migrates the snapshot file in place (it is a staging copy). */
export function prepareSnapshot(path: string, live: Db | undefined, sealer: Sealer | undefined): void {
  let raw: Database.Database;
  try {
    raw = new Database(path, { fileMustExist: true });
    const ok = raw.pragma('integrity_check', { simple: true });
    if (ok !== 'ok') throw new ArchiveError(`the archive's svc.db is damaged (integrity_check: ${String(ok)})`);
  } catch (e) {
    if (e instanceof ArchiveError) throw e;
    throw new ArchiveError(`the archive's svc.db is not a readable SQLite database: ${(e as Error).message}`);
  }
  try {
    const tables = new Set(raw.prepare("SELECT name FROM sqlite_master WHERE type='table'").pluck().all() as string[]);
    for (const t of ['__drizzle_migrations', 'apps', 'services', 'users']) {
      if (!tables.has(t)) throw new ArchiveError(`the archive's svc.db is not a svc database (no ${t} table)`);
    }
    if (live) {
      const theirs = raw.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number;
      const ours = live.$client.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number;
      if (theirs > ours) throw new ArchiveError('the archive was made by a newer svc (its database has migrations this one does not know); upgrade svc first');
    }
  } finally {
    raw.close();
  }
  const snap = openDb(path); // runs our migrations over an older schema
  try {
    if (sealer) verifyEncryptionKey(snap, sealer);
  } catch (e) {
    if (e instanceof EncryptionKeyError) {
      throw new KeyMismatchError('the archive was made with another SVC_ENCRYPTION_KEY; restore it with `svc restore` on a stopped daemon (it brings its own .env), or start svc with that key');
    }
    throw e;
  } finally {
    snap.$client.close();
  }
}

/** Tables of the live schema whose rows a restore replaces. */
function restoredTables(db: Db): string[] {
  const names = db.$client.prepare("SELECT name FROM main.sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  return names.filter((n) => !KEEP_LIVE.has(n));
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Replaces the live rows with the snapshot's, atomically. The snapshot must have passed prepareSnapshot. */
export function replaceState(db: Db, snapshotPath: string, inSameTransaction: () => void = () => {}): { tables: number; rows: number } {
  const c = db.$client;
  c.prepare('ATTACH DATABASE ? AS snap').run(snapshotPath);
  try {
    let rows = 0;
    const tables = restoredTables(db);
    c.transaction(() => {
      c.pragma('defer_foreign_keys = ON');
      // Sessions and tokens of users who exist on both sides, under the same name, survive the restore.
      const kept = new Map<string, unknown[]>();
      for (const t of KEEP_LIVE_OF_USERS) {
        kept.set(t, c.prepare(`SELECT x.* FROM main.${q(t)} x JOIN main.users u ON u.id = x.user_id JOIN snap.users s ON s.id = u.id AND s.username = u.username`).all());
      }
      for (const t of tables) c.prepare(`DELETE FROM main.${q(t)}`).run();
      for (const t of tables) {
        const cols = (c.prepare(`SELECT name FROM pragma_table_info(?, 'main')`).pluck().all(t) as string[]).map(q).join(', ');
        rows += c.prepare(`INSERT INTO main.${q(t)} (${cols}) SELECT ${cols} FROM snap.${q(t)}`).run().changes;
      }
      for (const [t, list] of kept) {
        for (const row of list as Record<string, unknown>[]) {
          // Without its id: a restored row may hold that id; the token hash is what identifies a session.
          const keys = Object.keys(row).filter((k) => k !== 'id');
          c.prepare(`INSERT OR IGNORE INTO main.${q(t)} (${keys.map(q).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`).run(...keys.map((k) => row[k]));
        }
      }
      // The caller's own writes (a restore's `committed` phase) commit with the rows or not at all.
      inSameTransaction();
    })();
    return { tables: tables.length, rows };
  } finally {
    c.prepare('DETACH DATABASE snap').run();
  }
}
