import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt, type Owner } from './common.js';
import { ORIGINS } from './deploys.js';

/**
 * A stack (issue 32): a Compose file svc runs, each of its services as one of svc's apps (`apps.stack_id`).
 * The file is either `compose` (the YAML text) or `repo_url` + `branch` + `compose_path`. Desired state,
 * written by src/desired/stacks.ts only.
 */
export const stacks = sqliteTable('stacks', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  compose: text('compose'),
  repoUrl: text('repo_url'),
  branch: text('branch').notNull().default('main'),
  composePath: text('compose_path').notNull().default('docker-compose.yml'),
  /** Bumped by every change of the file or of a variable; a stack deploy records the version it ran. */
  configVersion: integer('config_version').notNull().default(0),
  owner: text('owner').$type<Owner>().notNull().default('rest'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Stack variables, interpolated into the Compose file (`${VAR}`); a secret's value lives only sealed. */
export const stackVars = sqliteTable(
  'stack_vars',
  {
    id: integer('id').primaryKey(),
    stackId: integer('stack_id').notNull().references(() => stacks.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    value: text('value'),
    secretSealed: text('secret_sealed'),
    isSecret: integer('is_secret', { mode: 'boolean' }).notNull().default(false),
    required: integer('required', { mode: 'boolean' }).notNull().default(false),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('stack_vars_stack_key_idx').on(t.stackId, t.key)],
);

/** Change history of stack variables per key; non-secret old values are kept, secret ones never. */
export const stackVarHistory = sqliteTable(
  'stack_var_history',
  {
    id: integer('id').primaryKey(),
    stackId: integer('stack_id').notNull().references(() => stacks.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    action: text('action', { enum: ['created', 'updated', 'deleted'] }).notNull(),
    isSecret: integer('is_secret', { mode: 'boolean' }).notNull(),
    required: integer('required', { mode: 'boolean' }).notNull(),
    value: text('value'),
    changedAt: text('changed_at').notNull(),
    changedBy: text('changed_by'),
  },
  (t) => [index('stack_var_history_stack_key_idx').on(t.stackId, t.key, t.id)],
);

export const STACK_DEPLOY_STATUSES = ['pending', 'running', 'success', 'failed', 'rolled_back', 'cancelled'] as const;
export type StackDeployStatus = (typeof STACK_DEPLOY_STATUSES)[number];
export const STACK_DEPLOY_TRIGGERS = ['create', 'update', 'manual', 'rollback'] as const;
export type StackDeployTrigger = (typeof STACK_DEPLOY_TRIGGERS)[number];

/** One service's part of a stack deploy (src/reconcilers/stack/plan.ts walks them in order). */
export interface StackDeployStep {
  service: string;
  appId: number;
  action: 'create' | 'change';
  /** The fields that differ from the running definition (empty for a create). */
  changes: string[];
  /** The service stops before its replacement starts (a named volume, or `x-svc.strategy: stop_first`). */
  stopFirst: boolean;
  /** Its deploy of the service app, once started; the successful deploy it replaces (null: none). */
  deployId: number | null;
  previousDeployId: number | null;
  status: 'pending' | 'running' | 'done' | 'failed' | 'rolling_back' | 'rolled_back' | 'kept';
  /** The services of this deploy it depends on (it starts once they are done); absent in older rows: every step before it. */
  after?: string[];
}

/**
 * A stack deploy: a persisted state machine over its steps, in `depends_on` order, then (after a failed
 * step) back over the replaced ones. `compose_sealed` is the file it ran (sealed: files hold passwords),
 * which a stack rollback runs again. A record table: started by the stack command, advanced by the stack
 * reconciler, both through src/store/stacks.ts.
 */
export const stackDeploys = sqliteTable(
  'stack_deploys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    stackId: integer('stack_id').notNull().references(() => stacks.id, { onDelete: 'cascade' }),
    trigger: text('trigger', { enum: STACK_DEPLOY_TRIGGERS }).notNull(),
    origin: text('origin', { enum: ORIGINS }).notNull().default('api'),
    status: text('status', { enum: STACK_DEPLOY_STATUSES }).notNull().default('pending'),
    phase: text('phase', { enum: ['forward', 'rollback'] }).notNull().default('forward'),
    steps: text('steps', { mode: 'json' }).$type<StackDeployStep[]>().notNull(),
    composeSealed: text('compose_sealed'),
    configVersion: integer('config_version').notNull().default(0),
    error: text('error'),
    startedAt: text('started_at'),
    completedAt: text('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('stack_deploys_stack_idx').on(t.stackId, t.id)],
);

/** What happened to a stack, service by service (deploy steps, downtime, rollbacks, removals). */
export const stackEvents = sqliteTable(
  'stack_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    stackId: integer('stack_id').notNull().references(() => stacks.id, { onDelete: 'cascade' }),
    stackDeployId: integer('stack_deploy_id'),
    service: text('service'),
    timestamp: text('timestamp').notNull(),
    level: text('level', { enum: ['info', 'warn', 'error'] }).notNull().default('info'),
    message: text('message').notNull(),
  },
  (t) => [index('stack_events_stack_idx').on(t.stackId, t.id)],
);

export type StackRow = typeof stacks.$inferSelect;
export type StackVarRow = typeof stackVars.$inferSelect;
export type StackDeployRow = typeof stackDeploys.$inferSelect;
export type StackEventRow = typeof stackEvents.$inferSelect;
