// The apps command: the one write path of an app's desired state, for the REST API, the UI, the CLI
// (through REST) and manifest applies. Field shapes (zod), whole-record rules (app-rules.ts, with the
// ports svc itself uses, computed here from config), uniqueness inside the transaction, then the enqueue:
// the app (its reconciler converges containers) and the proxy (routing takes effect at once).
//
// Deleting an app is NOT a state (unlike services): the row goes at once, with everything hanging off it
// (FK cascades: deploys and their events, app events, env vars and history, links). The app reconciler,
// woken by the key, finds containers labelled with an app no row owns and removes them, and the proxy
// reconciler drops the route. Nothing of the app is needed for that cleanup but its name, which the key carries.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Config } from '../config.js';
import { keyOf, type Enqueue } from '../controller/types.js';
import { conflict, DomainError, invalid, notFound } from '../errors.js';
import { BRANCH_RE, repoUrlProblem } from '../build/repo-url.js';
import { getApp } from '../store/apps.js';
import { tx, type Db } from '../store/db.js';
import { ACCESS_MODES, APP_TYPES, BUILD_MODES, CODE_HOSTS, DEPLOY_STRATEGIES, PROJECT_TYPES, apps, nowIso, stacks, type AppRow, type Owner } from '../store/schema/index.js';
import { checkAppRules, guarded, type AppFields } from './app-rules.js';
import type { CommandCtx, Origin } from './context.js';
import { domainSchema, imageRefSchema, nameSchema, portSchema, replicasSchema, resourcesSchema } from './fields.js';
import { parseInput } from './parse.js';
import { trashAppVolumes } from '../volumes/dirs.js';
import { rollForVolumes } from './volume-roll.js';
import { canonicalJobs, canonicalVolumes, jobsSchema, volumesSchema } from './workload-fields.js';
import { previewSettingsSchema, settingsOf, settingsToStore } from '../previews/settings.js';
import { deletePreviewApps, getPreviewByApp, releasePreviewServices } from '../store/previews.js';

export type { AppFields } from './app-rules.js';
/** A repository access token in clear (`repo_token`): sealed by the command, never stored or shown as is. */
export type RepoTokenPatch = { repoToken?: string | null };
export type AppInput = { name: string } & Partial<AppFields> & RepoTokenPatch;

/** Writable fields, each optional; `null` clears a nullable one. Manifests validate App specs with it too. */
export const appFieldShape = {
  app_type: z.enum(APP_TYPES),
  build_mode: z.enum(BUILD_MODES),
  project_type: z.enum(PROJECT_TYPES),
  source: z.string().min(1).max(2048).nullable(),
  repo_url: z.string().superRefine((v, ctx) => {
    const problem = repoUrlProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).nullable(),
  branch: z.string().regex(BRANCH_RE, 'must be a git branch name'),
  internal_port: portSchema,
  image_ref: imageRefSchema.nullable(),
  domain: domainSchema.nullable(),
  fallback_port: portSchema.nullable(),
  access_mode: z.enum(ACCESS_MODES),
  health_check_path: z.string().max(1024).regex(/^\/\S*$/, 'must be a path starting with /'),
  /** A workflow file path (`.github/workflows/release.yml`) or a workflow name; null: any workflow. */
  ci_workflow: z.string().min(1).max(255).regex(/^[^\x00-\x1f\x7f]+$/, 'must not contain control characters').nullable(),
  /** Copies of the web process; 0 stops the app without deleting it. */
  replicas: replicasSchema,
  /** Limits of each replica; null (or a null member): unlimited. */
  resources: resourcesSchema.nullable(),
  /** Persistent directories mounted into every container of the app (issue 22); the complete list. */
  volumes: volumesSchema,
  /** `stop_first`: the old container stops before the new one starts (one writer at a time, short downtime). */
  deploy_strategy: z.enum(DEPLOY_STRATEGIES),
  /** Seconds an old version keeps its open connections after a switch before SIGTERM (issue 37). */
  drain_seconds: z.number().int().min(0).max(3600),
  /** Scheduled jobs (issue 22); the complete list. */
  jobs: jobsSchema,
  /** Pull-request previews (issue 20); null: off. A member left out takes its default. */
  previews: previewSettingsSchema.nullable(),
  /** Where `repo_url` is hosted (which webhook concerns the app, how a token is sent); null: derived from the URL. */
  code_host: z.enum(CODE_HOSTS).nullable(),
  /** Write-only: a token to clone a private repository over HTTPS (sent as a header); null removes it. */
  repo_token: z.string().min(1).max(4096).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces').nullable(),
};
const fields = z.object(appFieldShape).partial();
/** The create and update inputs (REST bodies, UI forms turned into the same shape). */
export const createAppSchema = fields.extend({ name: nameSchema }).strict();
export const updateAppSchema = fields.extend({ name: z.unknown().optional() }).strict();
export type AppApiFields = z.infer<typeof fields>;

/** What a field left out means on create (API.md "Apps"); manifests plan against the same defaults. */
export const APP_DEFAULTS = {
  appType: 'managed',
  buildMode: 'external_ci',
  projectType: 'auto',
  source: null,
  repoUrl: null,
  branch: 'main',
  internalPort: 3000,
  imageRef: null,
  domain: null,
  fallbackPort: null,
  accessMode: 'port',
  healthCheckPath: '/',
  ciWorkflow: null,
  replicas: 1,
  memoryMb: null,
  cpus: null,
  volumes: '[]',
  deployStrategy: 'blue_green',
  drainSeconds: 30,
  jobs: '[]',
  previews: null,
  codeHost: null,
} as const satisfies AppFields;

/** snake_case API fields to the store's camelCase; absent stays absent (partial update). Shared with manifests. */
export function appFieldsToStore(f: AppApiFields): Partial<AppFields> {
  return {
    appType: f.app_type,
    buildMode: f.build_mode,
    projectType: f.project_type,
    source: f.source,
    repoUrl: f.repo_url,
    branch: f.branch,
    internalPort: f.internal_port,
    imageRef: f.image_ref,
    domain: f.domain,
    fallbackPort: f.fallback_port,
    accessMode: f.access_mode,
    healthCheckPath: f.health_check_path,
    ciWorkflow: f.ci_workflow,
    replicas: f.replicas,
    // `resources` is one value: given, it sets both limits (a member left out is unlimited).
    memoryMb: f.resources === undefined ? undefined : (f.resources?.memory_mb ?? null),
    cpus: f.resources === undefined ? undefined : (f.resources?.cpus ?? null),
    volumes: f.volumes === undefined ? undefined : canonicalVolumes(f.volumes),
    deployStrategy: f.deploy_strategy,
    drainSeconds: f.drain_seconds,
    jobs: f.jobs === undefined ? undefined : canonicalJobs(f.jobs),
    previews: f.previews === undefined ? undefined : settingsToStore(f.previews),
    codeHost: f.code_host,
  };
}

/** The token of an API-shaped input (absent: unchanged), for createAppRecord / updateAppRecord to seal. */
export const repoTokenOf = (f: AppApiFields): RepoTokenPatch => (f.repo_token === undefined ? {} : { repoToken: f.repo_token });

/** The sealed column value of a token patch; undefined: leave the stored one. */
function sealedToken(ctx: CommandCtx, p: RepoTokenPatch): string | null | undefined {
  if (p.repoToken === undefined) return undefined;
  return p.repoToken === null ? null : ctx.sealer.seal(p.repoToken);
}

/** Ports the host already listens on for svc (the daemon, the proxy, DNS): an app's listener there could never bind. */
export const reservedPorts = (config: Pick<Config, 'port' | 'proxy'>): number[] => [
  config.port, config.proxy.httpPort, config.proxy.httpsPort, config.proxy.dnsPort,
];

/** Creates an app from an API-shaped input (REST body, UI form). 400 / 409 on bad input. */
export function createApp(ctx: CommandCtx, raw: unknown, origin: Origin): AppRow {
  const input = parseInput(createAppSchema, raw);
  return createAppRecord(ctx, { name: input.name, ...appFieldsToStore(input), ...repoTokenOf(input) }, 'rest', origin);
}

/** Changes writable fields from an API-shaped input; the name is immutable. */
export function updateApp(ctx: CommandCtx, id: number, raw: unknown, origin: Origin): AppRow {
  const input = parseInput(updateAppSchema, raw);
  if (input.name !== undefined) throw invalid('name is immutable; create a new app instead', { issues: [{ path: 'name', message: 'immutable' }] });
  return updateAppRecord(ctx, id, { ...appFieldsToStore(input), ...repoTokenOf(input) }, origin);
}

/**
 * Creates an app from fields already shaped by `appFieldShape` (a manifest's spec), owned by `owner`
 * ('rest' for the API and UI, or a manifest source). The record rules and uniqueness are checked here.
 */
export function createAppRecord(ctx: CommandCtx, input: AppInput, owner: Owner, origin: Origin): AppRow {
  const { db } = ctx;
  const { repoToken, name, ...fields } = input;
  const record: AppFields = { ...APP_DEFAULTS, ...stripUndefined(fields) };
  const repoTokenSealed = sealedToken(ctx, { repoToken }) ?? null;
  checkAppRules(record, reservedPorts(ctx.config));
  const row = guarded(() =>
    tx(db, () => {
      assertUnique(db, { name: input.name, domain: record.domain, fallbackPort: record.fallbackPort });
      assertPortFree(ctx, record, null);
      return db.insert(apps).values({ ...record, name, owner, repoTokenSealed }).returning().get();
    }),
  );
  announce(ctx.enqueue, row.name);
  ctx.log.info('app created', { app: row.name, origin });
  return row;
}

/** Changes writable fields (store-shaped); the merged record must pass every rule. */
export function updateAppRecord(ctx: CommandCtx, id: number, input: Partial<AppFields> & RepoTokenPatch, origin: Origin): AppRow {
  const { db } = ctx;
  const { repoToken, ...patch } = input;
  const repoTokenSealed = sealedToken(ctx, { repoToken });
  let routing = false;
  let dropped: ReturnType<typeof deletePreviewApps> = { apps: [], services: [], removed: [] };
  const row = guarded(() =>
    tx(db, () => {
      const current = getApp(db, id);
      if (!current) throw notFound('app');
      const merged: AppFields = { ...pickFields(current), ...stripUndefined(patch) };
      checkAppRules(merged, reservedPorts(ctx.config));
      assertUnique(db, { name: current.name, domain: merged.domain, fallbackPort: merged.fallbackPort }, id);
      assertPortFree(ctx, merged, current);
      routing = ROUTING_FIELDS.some((k) => merged[k] !== current[k]);
      // Previews turned off: every preview of the app goes with the change (issue 20).
      if (!settingsOf(merged.previews).enabled) dropped = deletePreviewApps(db, id);
      const updated = db
        .update(apps)
        .set({ ...merged, ...(repoTokenSealed === undefined ? {} : { repoTokenSealed }), updatedAt: nowIso() })
        .where(eq(apps.id, id))
        .returning()
        .get();
      // A bind mount is fixed when its container is made: changed volumes roll the app (issue 22).
      rollForVolumes(ctx, current, merged, origin);
      return updated;
    }),
  );
  for (const child of dropped.apps) announce(ctx.enqueue, child);
  for (const s of dropped.services) ctx.enqueue(keyOf('service', s));
  previewsGone(ctx, row.name, dropped.removed, 'previews were turned off for the app');
  announce(ctx.enqueue, row.name, routing || dropped.apps.length > 0);
  return row;
}

/**
 * Deletes the app and (by cascade) all it owns; the reconcilers clean up the engine and the proxy. Its
 * volumes stay on disk (a re-created app of the same name finds them) unless `purge`: then the app's
 * volumes directory is moved to the trash at once and the app reconciler removes it.
 */
export function deleteApp(ctx: CommandCtx, id: number, origin: Origin, opts: { purge?: boolean; reason?: string } = {}): void {
  const { db } = ctx;
  let self: { row: NonNullable<ReturnType<typeof getPreviewByApp>>; name: string; parent: string } | undefined;
  const [name, children] = tx(db, () => {
    const row = getApp(db, id);
    if (!row) throw notFound('app');
    const asPreview = getPreviewByApp(db, id);
    if (asPreview) self = { row: asPreview, name: row.name, parent: getApp(db, asPreview.parentId)?.name ?? row.name };
    // Its previews first: their rows would go by cascade, but their containers need their names announced.
    const children = deletePreviewApps(db, id);
    // A preview's own fresh services (issue 20) go with it, data included.
    children.services.push(...releasePreviewServices(db, [id]));
    db.delete(apps).where(eq(apps.id, id)).run();
    return [row.name, children] as const;
  });
  const purged = opts.purge ? trashAppVolumes(ctx.config.dataDir, name, id, ctx.now().getTime()) : false;
  for (const child of children.apps) announce(ctx.enqueue, child);
  for (const s of children.services) ctx.enqueue(keyOf('service', s));
  previewsGone(ctx, name, children.removed, 'the app was deleted');
  // A preview itself (closed, branch deleted, expired, or deleted by hand): its comment says so.
  if (self) previewsGone(ctx, self.parent, [self], opts.reason ?? 'the preview app was deleted');
  announce(ctx.enqueue, name);
  ctx.log.info('app deleted', { app: name, origin, volumes_purged: purged });
}

/** Tells the pull-request reporter (src/previews/reporter.ts) that these previews of `parent` went. */
function previewsGone(ctx: CommandCtx, parent: string, removed: ReturnType<typeof deletePreviewApps>['removed'], reason: string) {
  for (const { row, name } of removed) {
    ctx.bus.emit('previewGone', {
      previewId: row.id, parentId: row.parentId, prNumber: row.prNumber, host: row.host, repository: row.repository,
      commentId: row.commentId, app: parent, preview: name, sha: row.headSha, reason,
    });
  }
}

function assertUnique(db: Db, f: Pick<AppRow, 'name' | 'domain' | 'fallbackPort'>, selfId?: number) {
  const clash = (row: { id: number } | undefined) => row !== undefined && row.id !== selfId;
  if (clash(db.select({ id: apps.id }).from(apps).where(eq(apps.name, f.name)).get())) {
    throw conflict(`an app named ${f.name} already exists`, { field: 'name' });
  }
  // A stack's volumes live where an app of its name keeps its own (volumes/<name>/).
  if (selfId === undefined && db.select({ id: stacks.id }).from(stacks).where(eq(stacks.name, f.name)).get()) {
    throw conflict(`a stack named ${f.name} exists: an app of that name would share its volumes directory`, { field: 'name' });
  }
  if (f.domain && clash(db.select({ id: apps.id }).from(apps).where(eq(apps.domain, f.domain)).get())) {
    throw conflict(`domain ${f.domain} is already used by another app`, { field: 'domain' });
  }
  if (f.fallbackPort && clash(db.select({ id: apps.id }).from(apps).where(eq(apps.fallbackPort, f.fallbackPort)).get())) {
    throw conflict(`port ${f.fallbackPort} is already used by another app`, { field: 'fallback_port' });
  }
}

/** The port the proxy listens on for an app (port mode), null when it has no listener of its own. */
const listenerPort = (f: Pick<AppFields, 'accessMode' | 'fallbackPort'>): number | null => (f.accessMode === 'port' && f.fallbackPort ? f.fallbackPort : null);

/**
 * 409 `port_in_use` when the app would get a listener on a port another process on the host holds: Caddy
 * could never bind it. A port the app already had is not checked again (its listener is the proxy's own,
 * or already reported as the app's `route_error`).
 */
function assertPortFree(ctx: CommandCtx, next: AppFields, current: AppFields | null) {
  const port = listenerPort(next);
  if (port === null || (current && listenerPort(current) === port) || !ctx.portInUse?.(port)) return;
  throw new DomainError('conflict', 'port_in_use', `port ${port} is already in use by another process on this host: pick another port, or stop what listens there`, {
    field: 'fallback_port',
    port,
  });
}


/** The fields desiredRoutes reads (reconcilers/proxy/routes.ts): only a change of these concerns the proxy. */
// drainSeconds: Caddy keeps an app's streams across a config load for its drain (src/proxy/config.ts).
const ROUTING_FIELDS = ['appType', 'accessMode', 'domain', 'fallbackPort', 'internalPort', 'source', 'drainSeconds'] as const;

function announce(enqueue: Enqueue, name: string, routing = true) {
  enqueue(keyOf('app', name));
  // The schedule may have changed (or the app gone, with its runs' containers).
  enqueue(keyOf('jobs', name));
  // A pass of the proxy reads every app and compares Caddy's whole config: with 1,000 apps it was most of
  // the cost of a PUT that changed, say, the branch.
  if (routing) enqueue(keyOf('proxy', 'main'));
}

function pickFields(row: AppRow): AppFields {
  const { appType, buildMode, projectType, source, repoUrl, branch, internalPort, imageRef, domain, fallbackPort, accessMode, healthCheckPath, ciWorkflow, replicas, memoryMb, cpus, volumes, deployStrategy, drainSeconds, jobs, previews, codeHost } = row;
  return { appType, buildMode, projectType, source, repoUrl, branch, internalPort, imageRef, domain, fallbackPort, accessMode, healthCheckPath, ciWorkflow, replicas, memoryMb, cpus, volumes, deployStrategy, drainSeconds, jobs, previews, codeHost };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
