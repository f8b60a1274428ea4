// Apps: the one desired-state write path for the REST API and the manifest sources alike. Every write
// checks the whole resulting record (cross-field rules, uniqueness) inside its transaction and then
// enqueues the app (its reconciler converges containers) and the proxy (routing takes effect at once).
//
// Deleting an app is NOT a state here (unlike services): the row goes at once, with everything hanging
// off it (FK cascades: deploys and their events, app events, env vars and history, links). The app
// reconciler, woken by the key, finds containers labelled with an app no row owns and removes them, and
// the proxy reconciler drops the route. Nothing of the app is needed for that cleanup but its name,
// which the key carries.
import { desc, eq, sql } from 'drizzle-orm';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import { conflict, notFound } from '../errors.js';
import { tx, type Db } from './db.js';
import { perDb } from './prepared.js';
import { apps, appStatus, deploys, nowIso, type AppRow, type Owner } from './schema/index.js';
import { toAppView, type AppView } from './app-view.js';
import { checkAppRules, uniqueFieldOf, type AppFields } from './app-rules.js';

export type { AppFields } from './app-rules.js';
export type AppInput = { name: string } & Partial<AppFields>;

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
} as const satisfies AppFields;

/** Ports the host already uses (the daemon's own, the proxy's), refused as fallback ports. */
export interface AppWriteOpts {
  reservedPorts?: number[];
}

function assertUnique(db: Db, fields: Pick<AppRow, 'name' | 'domain' | 'fallbackPort'>, selfId?: number) {
  const clash = (row: { id: number } | undefined) => row !== undefined && row.id !== selfId;
  if (clash(db.select({ id: apps.id }).from(apps).where(eq(apps.name, fields.name)).get())) {
    throw conflict(`an app named ${fields.name} already exists`, { field: 'name' });
  }
  if (fields.domain && clash(db.select({ id: apps.id }).from(apps).where(eq(apps.domain, fields.domain)).get())) {
    throw conflict(`domain ${fields.domain} is already used by another app`, { field: 'domain' });
  }
  if (fields.fallbackPort && clash(db.select({ id: apps.id }).from(apps).where(eq(apps.fallbackPort, fields.fallbackPort)).get())) {
    throw conflict(`port ${fields.fallbackPort} is already used by another app`, { field: 'fallback_port' });
  }
}

/** Runs a write; a UNIQUE violation that slipped past the checks (a concurrent writer) is still a 409. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const field = uniqueFieldOf(err);
    if (field) throw conflict(`${field} is already used by another app`, { field });
    throw err;
  }
}

/** The fields desiredRoutes reads (reconcilers/proxy/routes.ts): only a change of these concerns the proxy. */
const ROUTING_FIELDS = ['appType', 'accessMode', 'domain', 'fallbackPort', 'internalPort', 'source'] as const;

function announce(enqueue: Enqueue, name: string, routing = true) {
  enqueue(keyOf('app', name));
  // A pass of the proxy reads every app and compares Caddy's whole config: with 1,000 apps it was most of
  // the cost of a PUT that changed, say, the branch.
  if (routing) enqueue(keyOf('proxy', 'main'));
}

/** Creates an app owned by `owner` ('rest' for the API, or a manifest source). 400/409 on bad input. */
export function createApp(db: Db, enqueue: Enqueue, input: AppInput, owner: Owner, opts: AppWriteOpts = {}): AppRow {
  const fields: AppFields = { ...APP_DEFAULTS, ...stripUndefined(input) };
  checkAppRules(fields, opts.reservedPorts);
  const row = guarded(() =>
    tx(db, () => {
      assertUnique(db, { name: input.name, domain: fields.domain, fallbackPort: fields.fallbackPort });
      return db.insert(apps).values({ ...fields, name: input.name, owner }).returning().get();
    }),
  );
  announce(enqueue, row.name);
  return row;
}

/** Changes writable fields of an app (the name is immutable); the merged record must pass every rule. */
export function updateApp(db: Db, enqueue: Enqueue, id: number, patch: Partial<AppFields>, opts: AppWriteOpts = {}): AppRow {
  let routing = false;
  const row = guarded(() =>
    tx(db, () => {
      const current = getApp(db, id);
      if (!current) throw notFound('app');
      const merged: AppFields = { ...pickFields(current), ...stripUndefined(patch) };
      checkAppRules(merged, opts.reservedPorts);
      assertUnique(db, { name: current.name, domain: merged.domain, fallbackPort: merged.fallbackPort }, id);
      routing = ROUTING_FIELDS.some((k) => merged[k] !== current[k]);
      return db.update(apps).set({ ...merged, updatedAt: nowIso() }).where(eq(apps.id, id)).returning().get();
    }),
  );
  announce(enqueue, row.name, routing);
  return row;
}

/** Deletes the app and (by cascade) all it owns; the reconcilers clean up the engine and the proxy. */
export function deleteApp(db: Db, enqueue: Enqueue, id: number): void {
  const name = tx(db, () => {
    const row = getApp(db, id);
    if (!row) throw notFound('app');
    db.delete(apps).where(eq(apps.id, id)).run();
    return row.name;
  });
  announce(enqueue, name);
}

// Built once per database: every reconcile pass and most requests read their app by one of these.
// Each is the spec row joined with its observed facts (app-view.ts).
const viewQuery = (db: Db) => db.select({ app: apps, s: appStatus }).from(apps).leftJoin(appStatus, eq(appStatus.appId, apps.id));
const byId = perDb((db) => viewQuery(db).where(eq(apps.id, sql.placeholder('id'))).prepare());
const byName = perDb((db) => viewQuery(db).where(eq(apps.name, sql.placeholder('name'))).prepare());
const view = (r: { app: AppRow; s: typeof appStatus.$inferSelect | null } | undefined) => r && toAppView(r.app, r.s);
export const getApp = (db: Db, id: number): AppView | undefined => view(byId(db).get({ id }));
export const getAppByName = (db: Db, name: string): AppView | undefined => view(byName(db).get({ name }));

/** Every app as readers see it (spec and observed facts), in id order. */
export const listAppViews = (db: Db): AppView[] => viewQuery(db).orderBy(apps.id).all().map((r) => toAppView(r.app, r.s));

/** An app with the config version its live deploy was made with (null: no live deploy). */
export interface AppWithDeployVersion {
  app: AppView;
  deployedConfigVersion: number | null;
}

const withDeployVersion = (db: Db) =>
  db
    .select({ app: apps, s: appStatus, deployedConfigVersion: deploys.configVersion })
    .from(apps)
    .leftJoin(appStatus, eq(appStatus.appId, apps.id))
    .leftJoin(deploys, eq(deploys.id, appStatus.liveDeployId));

/** Every app, newest first, each with its live deploy's config version, in one query. */
export function listAppsWithDeployVersion(db: Db): AppWithDeployVersion[] {
  return withDeployVersion(db)
    .orderBy(desc(apps.id))
    .all()
    .map((r) => ({ app: toAppView(r.app, r.s), deployedConfigVersion: r.deployedConfigVersion }));
}

/** One app with its live deploy's config version. */
export function getAppWithDeployVersion(db: Db, id: number): AppWithDeployVersion | undefined {
  const r = withDeployVersion(db).where(eq(apps.id, id)).get();
  return r && { app: toAppView(r.app, r.s), deployedConfigVersion: r.deployedConfigVersion };
}

function pickFields(row: AppRow): AppFields {
  const { appType, buildMode, projectType, source, repoUrl, branch, internalPort, imageRef, domain, fallbackPort, accessMode, healthCheckPath, ciWorkflow, replicas, memoryMb, cpus } = row;
  return { appType, buildMode, projectType, source, repoUrl, branch, internalPort, imageRef, domain, fallbackPort, accessMode, healthCheckPath, ciWorkflow, replicas, memoryMb, cpus };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
