// Per-app environment variables: the reads (lists, reveal, history) and the two the deploy pipeline needs
// (`resolveEnv`, `missingRequired`). The writes are the env command's (src/desired/env.ts).
import { and, asc, desc, eq } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import { notFound } from '../errors.js';
import type { Db } from './db.js';
import { apps, envHistory, envVars, type EnvVarRow } from './schema/index.js';

/** The app's id and name; 404 `not_found` when it does not exist. */
export function appOf(db: Db, appId: number) {
  const app = db.select({ id: apps.id, name: apps.name }).from(apps).where(eq(apps.id, appId)).get();
  if (!app) throw notFound('app');
  return app;
}

/** One variable of an app, or undefined. */
export const getVar = (db: Db, appId: number, key: string) =>
  db.select().from(envVars).where(and(eq(envVars.appId, appId), eq(envVars.key, key))).get();

/** The plaintext of a variable (decrypting a secret). Callers must never log it. */
export const plainValue = (sealer: Sealer, row: EnvVarRow): string =>
  row.isSecret ? (row.secretSealed ? sealer.open(row.secretSealed) : '') : (row.value ?? '');

/** The variables of an app, by key. 404 for an unknown app. */
export function listEnv(db: Db, appId: number): EnvVarRow[] {
  appOf(db, appId);
  return db.select().from(envVars).where(eq(envVars.appId, appId)).orderBy(asc(envVars.key)).all();
}

/** One variable with its plaintext value (the reveal endpoint). 404 when absent. */
export function revealEnv(db: Db, sealer: Sealer, appId: number, key: string): { key: string; value: string } {
  appOf(db, appId);
  const row = getVar(db, appId, key);
  if (!row) throw notFound('environment variable');
  return { key, value: plainValue(sealer, row) };
}

/**
 * The change history of a key, newest first (API.md: time-ordered lists); by row id, because two changes
 * in the same second share their `changed_at`. 404 when the key never existed.
 */
export function envKeyHistory(db: Db, appId: number, key: string) {
  appOf(db, appId);
  const rows = db.select().from(envHistory).where(and(eq(envHistory.appId, appId), eq(envHistory.key, key))).orderBy(desc(envHistory.id)).all();
  if (rows.length === 0) throw notFound('environment variable');
  return rows;
}

/** Every variable of the app, decrypted, for injection into its containers at deploy time. Never log it. */
export function resolveEnv(db: Db, sealer: Sealer, appId: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const row of db.select().from(envVars).where(eq(envVars.appId, appId)).orderBy(asc(envVars.key)).all()) {
    out[row.key] = plainValue(sealer, row);
  }
  return out;
}

/** Keys marked required that have no value or an empty one (a deploy refuses to start with any). */
export function missingRequired(db: Db, appId: number): string[] {
  return db
    .select()
    .from(envVars)
    .where(and(eq(envVars.appId, appId), eq(envVars.required, true)))
    .orderBy(asc(envVars.key))
    .all()
    .filter((r) => (r.isSecret ? r.secretSealed === null : !r.value))
    .map((r) => r.key);
}
