// The administrator account(s). Only the first user is created through the API (setup); the hash is
// computed by the caller (src/auth/password.ts) so this module stays synchronous and transactional.
import { eq, sql } from 'drizzle-orm';
import { conflict } from '../errors.js';
import { tx, type Db } from './db.js';
import { users } from './schema/index.js';

export interface PublicUser {
  id: number;
  username: string;
  created_at: string;
}

/** The API shape of a user: never the hash. */
export const userJson = (u: { id: number; username: string; createdAt: string }): PublicUser => ({
  id: u.id,
  username: u.username,
  created_at: u.createdAt,
});

/** True while no user exists: the setup page and `POST /api/auth/setup` are open only then. */
export const setupRequired = (db: Db): boolean =>
  db.select({ n: sql<number>`count(*)` }).from(users).get()!.n === 0;

/**
 * Creates the first user. The emptiness check and the insert share one transaction, so two racing setup
 * requests cannot both succeed: the second gets 409.
 */
export function createFirstUser(db: Db, username: string, passwordHash: string): PublicUser {
  return tx(db, () => {
    if (!setupRequired(db)) throw conflict('setup is already done; log in instead');
    return userJson(db.insert(users).values({ username, passwordHash }).returning().get());
  });
}

export const findUserByName = (db: Db, username: string) =>
  db.select().from(users).where(eq(users.username, username)).get();
