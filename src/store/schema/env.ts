import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { apps } from './apps.js';

/** Per-app variables. A secret's value lives only sealed in `secret_sealed`; `value` is null for it. */
export const envVars = sqliteTable(
  'env_vars',
  {
    id: integer('id').primaryKey(),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    value: text('value'),
    secretSealed: text('secret_sealed'),
    isSecret: integer('is_secret', { mode: 'boolean' }).notNull().default(false),
    required: integer('required', { mode: 'boolean' }).notNull().default(false),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('env_vars_app_key_idx').on(t.appId, t.key)],
);

/** Change history per key; non-secret old values are kept, secret ones never. */
export const envHistory = sqliteTable(
  'env_history',
  {
    id: integer('id').primaryKey(),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    action: text('action', { enum: ['created', 'updated', 'deleted'] }).notNull(),
    isSecret: integer('is_secret', { mode: 'boolean' }).notNull(),
    required: integer('required', { mode: 'boolean' }).notNull(),
    value: text('value'),
    changedAt: text('changed_at').notNull(),
    changedBy: text('changed_by'),
  },
  (t) => [index('env_history_app_key_idx').on(t.appId, t.key, t.id)],
);

export type EnvVarRow = typeof envVars.$inferSelect;
