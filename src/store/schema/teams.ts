import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt } from './common.js';
import { ROLES, users } from './users.js';

/** Single-use invitation links: only the SHA-256 of the link's token is kept. */
export const invitations = sqliteTable('invitations', {
  id: integer('id').primaryKey(),
  tokenHash: text('token_hash').notNull().unique(),
  role: text('role', { enum: ROLES }).notNull(),
  apps: text('apps', { mode: 'json' }).$type<string[] | null>(),
  createdBy: text('created_by').notNull(),
  createdAt: createdAt(),
  expiresAt: text('expires_at').notNull(),
  /** Set when the link is used (it then works no more), with the account it created. */
  usedAt: text('used_at'),
  usedBy: text('used_by'),
});

/** Ten single-use recovery codes per user with a second factor, stored hashed. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [index('recovery_codes_user_idx').on(t.userId)],
);

/**
 * Who changed what, when and from where, and every reveal of a secret. Field names only, never values.
 * The user is copied by name: the record outlives the account.
 */
export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey(),
    at: text('at').notNull(),
    userId: integer('user_id'),
    username: text('username'),
    origin: text('origin').notNull(),
    address: text('address'),
    action: text('action').notNull(),
    target: text('target'),
    fields: text('fields', { mode: 'json' }).$type<string[]>().notNull(),
    status: integer('status').notNull(),
  },
  (t) => [index('audit_log_at_idx').on(t.at)],
);
