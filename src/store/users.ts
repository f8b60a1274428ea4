// User accounts (docs/api.md "Teams"). The first user is created by setup and is an owner; the others come
// through invitations (src/desired/users.ts, which also creates the first). Hashes are computed by the caller (src/auth/password.ts) so this module
// stays synchronous and transactional.
import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { users, type Role } from './schema/index.js';

export type UserRow = typeof users.$inferSelect;

export interface PublicUser {
  id: number;
  username: string;
  role: Role;
  /** App names the user is limited to; null: every app. */
  apps: string[] | null;
  totp_enabled: boolean;
  created_at: string;
}

/** The API shape of a user: never the hash or the second factor's secret. */
export const userJson = (u: UserRow): PublicUser => ({
  id: u.id,
  username: u.username,
  role: u.role,
  apps: u.apps ?? null,
  totp_enabled: u.totpEnabledAt !== null,
  created_at: u.createdAt,
});

/** True while no user exists: the setup page and `POST /api/auth/setup` are open only then. */
export const setupRequired = (db: Db): boolean =>
  db.select({ n: sql<number>`count(*)` }).from(users).get()!.n === 0;

export const findUserByName = (db: Db, username: string) =>
  db.select().from(users).where(eq(users.username, username)).get();

export const findUser = (db: Db, id: number) => db.select().from(users).where(eq(users.id, id)).get();

export const listUsers = (db: Db): PublicUser[] => db.select().from(users).orderBy(asc(users.id)).all().map(userJson);

export const countOwners = (db: Db): number =>
  db.select({ n: sql<number>`count(*)` }).from(users).where(eq(users.role, 'owner')).get()!.n;
