import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt } from './common.js';

/** The roles, least last; what each may do is src/auth/permissions.ts. */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const users = sqliteTable('users', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  username: text('username').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  /** owner, admin, developer or viewer (src/auth/permissions.ts); the default is the least. */
  role: text('role', { enum: ROLES }).notNull().default('viewer'),
  /** App names a developer is limited to; null: every app. */
  apps: text('apps', { mode: 'json' }).$type<string[] | null>(),
  /** The TOTP secret, sealed; set at setup, in force once `totp_enabled_at` is set. */
  totpSecretSealed: text('totp_secret_sealed'),
  totpEnabledAt: text('totp_enabled_at'),
  createdAt: createdAt(),
});

/** Server-side sessions: only the SHA-256 of the cookie token is stored. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: createdAt(),
    lastSeenAt: text('last_seen_at').notNull(),
    /** Where and with what the session was opened, for the user's session list. */
    address: text('address'),
    userAgent: text('user_agent'),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** Bearer tokens for the CLI and CI; shown once, stored hashed. */
export const apiTokens = sqliteTable('api_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: createdAt(),
  lastUsedAt: text('last_used_at'),
  /** `read`, `deploy:<app>`, `admin`; null only on rows older than scopes (start-up gives them `admin`). */
  scopes: text('scopes', { mode: 'json' }).$type<string[] | null>(),
  /** After this instant the token is refused; null: never expires. */
  expiresAt: text('expires_at'),
});
