// App rows: the reads every request and reconcile pass makes. The writes of an app's desired state (with
// their rules) are the apps command's (src/desired/apps.ts).
import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { perDb } from './prepared.js';
import { apps, deploys, type AppRow } from './schema/index.js';

// Built once per database: every reconcile pass and most requests read their app by one of these.
const byId = perDb((db) => db.select().from(apps).where(eq(apps.id, sql.placeholder('id'))).prepare());
const byName = perDb((db) => db.select().from(apps).where(eq(apps.name, sql.placeholder('name'))).prepare());
export const getApp = (db: Db, id: number): AppRow | undefined => byId(db).get({ id });
export const getAppByName = (db: Db, name: string): AppRow | undefined => byName(db).get({ name });

/** An app with the config version its live deploy was made with (null: no live deploy). */
export interface AppWithDeployVersion {
  app: AppRow;
  deployedConfigVersion: number | null;
}

/** Every app, newest first, each with its live deploy's config version, in one query. */
export function listAppsWithDeployVersion(db: Db): AppWithDeployVersion[] {
  return db
    .select({ app: apps, deployedConfigVersion: deploys.configVersion })
    .from(apps)
    .leftJoin(deploys, eq(deploys.id, apps.currentDeployId))
    .orderBy(desc(apps.id))
    .all();
}

/** One app with its live deploy's config version. */
export function getAppWithDeployVersion(db: Db, id: number): AppWithDeployVersion | undefined {
  return db
    .select({ app: apps, deployedConfigVersion: deploys.configVersion })
    .from(apps)
    .leftJoin(deploys, eq(deploys.id, apps.currentDeployId))
    .where(eq(apps.id, id))
    .get();
}
