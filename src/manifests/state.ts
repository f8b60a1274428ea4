// What a manifest plan compares against: the current desired state of every app and service, read from
// the store in one pass (the effectful half; plan.ts is the pure half). Secret values are decrypted here
// only so the plan can tell "unchanged" from "changed"; they never leave the process.
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import type { Db } from '../store/db.js';
import { plainValue } from '../store/env.js';
import { APP_DEFAULTS, type AppFields } from '../desired/apps.js';
import { listAppViews } from '../store/apps.js';
import { selectServiceViews, viewOf } from '../store/service-view.js';
import { apps, deploys, envVars, serviceLinks, services, serviceUpgrades, type Owner, type ServiceType } from '../store/schema/index.js';

export interface CurrentEnv {
  key: string;
  value: string;
  isSecret: boolean;
  required: boolean;
}

export interface CurrentApp {
  id: number;
  name: string;
  owner: Owner;
  fields: AppFields;
  /** The app's `repo_token` in clear (compared with a manifest's, never shown); null: none or unreadable. */
  repoToken?: string | null;
  env: CurrentEnv[];
  links: { service: string; alias: string | null }[];
  /** Image of the live deploy; null with none. */
  liveImage: string | null;
  /** Images of deploys still pending or running. */
  openImages: string[];
  /** Images whose newest deploy ended failed or auto_rollback (not retried until the manifest changes). */
  failedImages: string[];
}

export interface CurrentService {
  id: number;
  name: string;
  type: ServiceType;
  owner: Owner;
  /** The version that serves (after an upgrade's switch, the new one). */
  version: string;
  /** The version a running upgrade goes to (it serves `version` until its switch). */
  upgradingTo: string | null;
  /** Marked deleted, the reconciler is removing it. */
  deleting: boolean;
}

export interface CurrentState {
  apps: CurrentApp[];
  services: CurrentService[];
}

const FIELD_KEYS = Object.keys(APP_DEFAULTS) as (keyof AppFields)[];

/** The writable fields of a row (whatever AppFields holds, so a new API field is compared too). */
export function fieldsOf(row: Record<string, unknown>): AppFields {
  return Object.fromEntries(FIELD_KEYS.map((k) => [k, row[k]])) as unknown as AppFields;
}

/** A sealed token that no longer opens (another SVC_ENCRYPTION_KEY) counts as none: a manifest naming one sets it again. */
function openToken(sealer: Sealer, sealed: string | null): string | null {
  if (!sealed) return null;
  try {
    return sealer.open(sealed);
  } catch {
    return null;
  }
}

/** Reads the whole current state in a handful of queries (500 apps plan in milliseconds). */
export function readState(db: Db, sealer: Sealer): CurrentState {
  const appRows = listAppViews(db);
  const serviceRows = selectServiceViews(db).all().map(viewOf);
  const serviceName = new Map(serviceRows.map((s) => [s.id, s.name]));
  const upgrading = new Map(
    db.select({ serviceId: serviceUpgrades.serviceId, to: serviceUpgrades.toVersion }).from(serviceUpgrades).where(eq(serviceUpgrades.status, 'running')).all().map((u) => [u.serviceId, u.to]),
  );
  const envByApp = new Map<number, CurrentEnv[]>();
  for (const row of db.select().from(envVars).all()) {
    const list = envByApp.get(row.appId) ?? [];
    list.push({ key: row.key, value: plainValue(sealer, row), isSecret: row.isSecret, required: row.required });
    envByApp.set(row.appId, list);
  }
  const linksByApp = new Map<number, CurrentApp['links']>();
  for (const l of db.select().from(serviceLinks).all()) {
    const name = serviceName.get(l.serviceId);
    if (name === undefined) continue;
    const list = linksByApp.get(l.appId) ?? [];
    list.push({ service: name, alias: l.alias });
    linksByApp.set(l.appId, list);
  }
  const deployRows = db
    .select({ id: deploys.id, appId: deploys.appId, imageRef: deploys.imageRef, status: deploys.status })
    .from(deploys)
    .where(inArray(deploys.status, ['pending', 'running', 'success', 'failed', 'auto_rollback']))
    .orderBy(desc(deploys.id))
    .all();
  const byId = new Map(deployRows.map((d) => [d.id, d]));
  const deploysByApp = new Map<number, typeof deployRows>();
  for (const d of deployRows) deploysByApp.set(d.appId, [...(deploysByApp.get(d.appId) ?? []), d]);

  return {
    apps: appRows.map((row) => {
      const ds = deploysByApp.get(row.id) ?? [];
      const newestByImage = new Map<string, string>();
      for (const d of ds) if (d.imageRef && !newestByImage.has(d.imageRef)) newestByImage.set(d.imageRef, d.status);
      return {
        id: row.id,
        name: row.name,
        owner: row.owner,
        fields: fieldsOf(row as unknown as Record<string, unknown>),
        repoToken: openToken(sealer, row.repoTokenSealed),
        env: envByApp.get(row.id) ?? [],
        links: linksByApp.get(row.id) ?? [],
        liveImage: (row.currentDeployId !== null && byId.get(row.currentDeployId)?.imageRef) || null,
        openImages: ds.filter((d) => d.status === 'pending' || d.status === 'running').flatMap((d) => (d.imageRef ? [d.imageRef] : [])),
        failedImages: [...newestByImage].filter(([, s]) => s === 'failed' || s === 'auto_rollback').map(([image]) => image),
      };
    }),
    services: serviceRows.map((s) => ({ id: s.id, name: s.name, type: s.type, owner: s.owner, version: s.version, upgradingTo: upgrading.get(s.id) ?? null, deleting: s.deletedAt !== null })),
  };
}

/** Ids of one app, for the apply step (a name may have been created earlier in the same transaction). */
export const appIdByName = (db: Db, name: string): number | undefined =>
  db.select({ id: apps.id }).from(apps).where(eq(apps.name, name)).get()?.id;

/** A live service's id by name. */
export const serviceIdByName = (db: Db, name: string): number | undefined =>
  db.select({ id: services.id, deletedAt: services.deletedAt }).from(services).where(and(eq(services.name, name))).all().find((s) => s.deletedAt === null)?.id;
