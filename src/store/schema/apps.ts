import { sqliteTable, integer, real, text } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt, type Owner } from './common.js';
import { stacks } from './stacks.js';

export const APP_TYPES = ['managed', 'adopted_container', 'external_service'] as const;
export const BUILD_MODES = ['external_ci', 'svc_build'] as const;
export const PROJECT_TYPES = ['auto', 'static', 'node', 'go', 'java'] as const;
export const ACCESS_MODES = ['domain', 'port'] as const;
export const DEPLOY_STRATEGIES = ['blue_green', 'stop_first'] as const;
/** Where an app's repository is hosted (issue 20, "Code hosts beyond GitHub"). */
export const CODE_HOSTS = ['github', 'gitlab', 'gitea', 'forgejo'] as const;
export const APP_STATUSES = ['active', 'inactive', 'error'] as const;

/**
 * Desired state of an app: what the user asked for, written only by commands (REST, UI, manifests,
 * webhooks). What svc observed or decided lives in `app_status` (observed.ts), never here.
 * `configVersion` is bumped by every env or link change; a deploy records the version it snapshotted,
 * so `config_changed` is derived, never stored twice.
 */
export const apps = sqliteTable('apps', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  appType: text('app_type', { enum: ['managed', 'adopted_container', 'external_service'] }).notNull().default('managed'),
  buildMode: text('build_mode', { enum: ['external_ci', 'svc_build'] }).notNull().default('external_ci'),
  projectType: text('project_type', { enum: ['auto', 'static', 'node', 'go', 'java'] }).notNull().default('auto'),
  source: text('source'),
  repoUrl: text('repo_url'),
  branch: text('branch').notNull().default('main'),
  internalPort: integer('internal_port').notNull().default(3000),
  imageRef: text('image_ref'),
  domain: text('domain').unique(),
  fallbackPort: integer('fallback_port').unique(),
  accessMode: text('access_mode', { enum: ['domain', 'port'] }).notNull().default('port'),
  healthCheckPath: text('health_check_path').notNull().default('/'),
  /** `external_ci`: only runs of this workflow (file path or name) deploy; null: any workflow. */
  ciWorkflow: text('ci_workflow'),
  /** Copies of the web process behind the app's one name (0: stopped, kept). */
  replicas: integer('replicas').notNull().default(1),
  /** Memory cap of each replica in MiB; null: unlimited. */
  memoryMb: integer('memory_mb'),
  /** CPU share of each replica in cores (0.5 = half a core); null: unlimited. */
  cpus: real('cpus'),
  /**
   * Persistent volumes (issue 22): canonical JSON text of `[{name, mount_path}]`, sorted by name, so the
   * manifest diff compares it as one value. Each is `SVC_DATA_DIR/volumes/<app>/<name>` on the host.
   */
  volumes: text('volumes').notNull().default('[]'),
  /** `blue_green` (start new, switch, stop old) or `stop_first` (stop old, then start new: one writer). */
  deployStrategy: text('deploy_strategy', { enum: ['blue_green', 'stop_first'] }).notNull().default('blue_green'),
  /**
   * How long an old version keeps its open connections (WebSockets, streams, requests in flight) after a
   * switch before it gets SIGTERM (issue 37); also how long Caddy keeps an app's streams across a config load.
   */
  drainSeconds: integer('drain_seconds').notNull().default(30),
  /** Scheduled jobs (issue 22): canonical JSON text of `[{name, schedule, command, timeout_seconds, concurrency}]`. */
  jobs: text('jobs').notNull().default('[]'),
  /** Pull-request previews (issue 20): canonical JSON of PreviewSettings (src/previews/settings.ts); null: off. */
  previews: text('previews'),
  /** The code host of `repo_url`; null: derived from the URL's host name (src/codehost/hosts.ts). */
  codeHost: text('code_host', { enum: ['github', 'gitlab', 'gitea', 'forgejo'] }),
  /**
   * Access token for cloning a private repository over HTTPS, sealed (src/crypto.ts); null: none. Never part
   * of AppFields (a manifest diff or an app JSON never sees it): written by its own command path.
   */
  repoTokenSealed: text('repo_token_sealed'),
  configVersion: integer('config_version').notNull().default(0),
  owner: text('owner').$type<Owner>().notNull().default('rest'),
  /** The stack this app is a service of (issue 32: `<stack>-<service>`); null for an app of its own. */
  stackId: integer('stack_id').references(() => stacks.id),
  /**
   * A stack service's definition (JSON of src/stacks/service-spec.ts StackServiceSpec): the container fields
   * apps lack (command, entrypoint, user, health check, tmpfs, labels, networks, named volumes). Copied
   * into each deploy (`deploys.stack_service`), which is what its containers are made from.
   */
  stackService: text('stack_service'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type AppRow = typeof apps.$inferSelect;
export type NewAppRow = typeof apps.$inferInsert;
