// App rows: the reads every request and reconcile pass makes, each the spec row joined with its observed
// facts (app-view.ts). The writes of an app's desired state (with their rules) are the apps command's
// (src/desired/apps.ts); the observed facts are the app reconciler's (src/observed/apps.ts).
import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { perDb } from './prepared.js';
import { apps, appStatus, deploys, type AppRow } from './schema/index.js';
import { toAppView, type AppView } from './app-view.js';

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
// Prepared: every POST and PUT of an app answers with it.
const withDeployVersionById = perDb((db) => withDeployVersion(db).where(eq(apps.id, sql.placeholder('id'))).prepare());

export function getAppWithDeployVersion(db: Db, id: number): AppWithDeployVersion | undefined {
  const r = withDeployVersionById(db).get({ id });
  return r && { app: toAppView(r.app, r.s), deployedConfigVersion: r.deployedConfigVersion };
}
