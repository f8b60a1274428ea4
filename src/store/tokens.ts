// API tokens for the CLI and CI (`Authorization: Bearer`). The token is shown once at creation; the table
// keeps only its SHA-256. A `svc_` prefix makes leaked tokens easy to recognise by secret scanners.
import { and, desc, eq, sql } from 'drizzle-orm';
import { randomToken, sha256Hex } from '../crypto.js';
import { notFound } from '../errors.js';
import type { Db } from './db.js';
import { perDb } from './prepared.js';
import { apiTokens, users } from './schema/index.js';
import { iso } from './sessions.js';
import { userJson, type PublicUser } from './users.js';

const TOUCH_MS = 60 * 1000;

export interface TokenJson {
  id: number;
  name: string;
  scopes: string[];
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

const tokenJson = (t: typeof apiTokens.$inferSelect): TokenJson => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes ?? ['admin'],
  expires_at: t.expiresAt,
  created_at: t.createdAt,
  last_used_at: t.lastUsedAt,
});

/** Creates a token for `userId`; the result is the only place the token itself ever appears. */
export function createApiToken(
  db: Db,
  userId: number,
  input: { name: string; scopes: string[]; expiresAt: string | null },
  now: Date,
): TokenJson & { token: string } {
  const token = `svc_${randomToken(32)}`;
  const row = db
    .insert(apiTokens)
    .values({ userId, name: input.name, scopes: input.scopes, expiresAt: input.expiresAt, tokenHash: sha256Hex(token), createdAt: iso(now) })
    .returning()
    .get();
  return { ...tokenJson(row), token };
}

/** The tokens of a user, newest first, without their secret part. */
export const listApiTokens = (db: Db, userId: number): TokenJson[] =>
  db.select().from(apiTokens).where(eq(apiTokens.userId, userId)).orderBy(desc(apiTokens.id)).all().map(tokenJson);

/** Deletes one of the user's tokens; 404 for another user's or an unknown id. */
export function deleteApiToken(db: Db, userId: number, id: number): void {
  const r = db.delete(apiTokens).where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId))).run();
  if (r.changes === 0) throw notFound('token');
}

const byTokenHash = perDb((db) =>
  db
    .select({ id: apiTokens.id, lastUsedAt: apiTokens.lastUsedAt, scopes: apiTokens.scopes, expiresAt: apiTokens.expiresAt, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.tokenHash, sql.placeholder('hash')))
    .prepare(),
);

/** The user a bearer token belongs to, or undefined. Records use at most once a minute. */
export function tokenUser(db: Db, token: string, now: Date): PublicUser | undefined {
  return tokenOf(db, token, now)?.user;
}

/** The token's user and scopes; undefined when unknown, expired, or its user is gone. Records use at most once a minute. */
export function tokenOf(db: Db, token: string, now: Date): { id: number; user: PublicUser; scopes: string[] } | undefined {
  const row = byTokenHash(db).get({ hash: sha256Hex(token) });
  if (!row) return undefined;
  if (row.expiresAt !== null && Date.parse(row.expiresAt) <= now.getTime()) return undefined;
  if (!row.lastUsedAt || now.getTime() - Date.parse(row.lastUsedAt) >= TOUCH_MS) {
    db.update(apiTokens).set({ lastUsedAt: iso(now) }).where(eq(apiTokens.id, row.id)).run();
  }
  return { id: row.id, user: userJson(row.user), scopes: row.scopes ?? ['admin'] };
}
