import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { deploys } from './deploys.js';
import { apps } from './apps.js';

export const EVENT_LEVELS = ['info', 'warn', 'error'] as const;
export type EventLevel = (typeof EVENT_LEVELS)[number];

/** One structured event per pipeline step of a deploy (SPEC.md 2.3, 6.1). */
export const deployEvents = sqliteTable(
  'deploy_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    deployId: integer('deploy_id').notNull().references(() => deploys.id, { onDelete: 'cascade' }),
    timestamp: text('timestamp').notNull(),
    level: text('level', { enum: ['info', 'warn', 'error'] }).notNull().default('info'),
    step: text('step').notNull(),
    message: text('message').notNull(),
  },
  (t) => [index('deploy_events_deploy_idx').on(t.deployId, t.id)],
);

/** App-level events outside deploys: self-healing restarts, drift corrections. */
export const appEvents = sqliteTable(
  'app_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    timestamp: text('timestamp').notNull(),
    level: text('level', { enum: ['info', 'warn', 'error'] }).notNull().default('info'),
    step: text('step').notNull(),
    message: text('message').notNull(),
  },
  (t) => [index('app_events_app_idx').on(t.appId, t.id)],
);
