// Server-side login sessions. The cookie carries a random token; the table keeps only its SHA-256, so a
// copy of the database does not let anyone log in. A session dies after 7 days without use; use refreshes
// `last_seen_at` at most once a minute, so authenticated reads do not each cost a write.
import { and, desc, eq, lt, ne, sql } from 'drizzle-orm';
import { notFound } from '../errors.js';
import { randomToken, sha256Hex } from '../crypto.js';
import type { Db } from './db.js';
import { perDb } from './prepared.js';
import { sessions, users } from './schema/index.js';
import { userJson, type PublicUser } from './users.js';

export const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
export const SESSION_TOUCH_MS = 60 * 1000;

/** ISO 8601 UTC without milliseconds, the format of every stored timestamp. */
export const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Starts a session for `userId` and returns the token for the cookie (shown to nobody else). */
export function createSession(db: Db, userId: number, now: Date, from: { address?: string; userAgent?: string } = {}): string {
  const token = randomToken(32);
  // Expired sessions are swept here: logins are rare, so this costs nothing on the hot path.
  db.delete(sessions).where(lt(sessions.lastSeenAt, iso(new Date(now.getTime() - SESSION_IDLE_MS)))).run();
  db.insert(sessions).values({ userId, tokenHash: sha256Hex(token), lastSeenAt: iso(now), createdAt: iso(now), address: from.address, userAgent: from.userAgent?.slice(0, 200) }).run();
  return token;
}

const bySessionHash = perDb((db) =>
  db
    .select({ id: sessions.id, lastSeenAt: sessions.lastSeenAt, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.tokenHash, sql.placeholder('hash')))
    .prepare(),
);

/** The user a session token belongs to, or undefined when unknown or idle for too long (then it is removed). */
export function sessionUser(db: Db, token: string, now: Date): PublicUser | undefined {
  return sessionOf(db, token, now)?.user;
}

/** The session of a token and its user (a deleted user's sessions are gone with it: the join finds nothing). */
export function sessionOf(db: Db, token: string, now: Date): { id: number; user: PublicUser } | undefined {
  const row = bySessionHash(db).get({ hash: sha256Hex(token) });
  if (!row) return undefined;
  const idle = now.getTime() - Date.parse(row.lastSeenAt);
  if (idle > SESSION_IDLE_MS) {
    db.delete(sessions).where(eq(sessions.id, row.id)).run();
    return undefined;
  }
  if (idle >= SESSION_TOUCH_MS) db.update(sessions).set({ lastSeenAt: iso(now) }).where(eq(sessions.id, row.id)).run();
  return { id: row.id, user: userJson(row.user) };
}

export type SessionRow = typeof sessions.$inferSelect;

/** A user's sessions, most recently used first. */
export const listSessions = (db: Db, userId: number): SessionRow[] =>
  db.select().from(sessions).where(eq(sessions.userId, userId)).orderBy(desc(sessions.lastSeenAt), desc(sessions.id)).all();

/** Ends one of the user's sessions; 404 for another user's or an unknown id. */
export function deleteSession(db: Db, userId: number, id: number): void {
  const r = db.delete(sessions).where(and(eq(sessions.id, id), eq(sessions.userId, userId))).run();
  if (r.changes === 0) throw notFound('session');
}

/** Ends every session of the user but `keepId` (after a password change). */
export function deleteOtherSessions(db: Db, userId: number, keepId: number | undefined): void {
  db.delete(sessions).where(keepId === undefined ? eq(sessions.userId, userId) : and(eq(sessions.userId, userId), ne(sessions.id, keepId))).run();
}

/** Revokes the session of `token` (logout); unknown tokens are ignored. */
export function revokeSession(db: Db, token: string): void {
  db.delete(sessions).where(eq(sessions.tokenHash, sha256Hex(token))).run();
}
