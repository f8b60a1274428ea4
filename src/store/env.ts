// Per-app environment variables: the desired-state write path (API and manifests) and the two reads the
// deploy pipeline needs (`resolveEnv`, `missingRequired`). A secret's value exists only sealed
// (AES-256-GCM, `secret_sealed`); an empty secret is stored as no sealed value at all, so "is it missing"
// needs no key. Every change bumps the app's config version (it then shows `config_changed`) and enqueues
// the app; history keeps old non-secret values and never a secret one.
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Enqueue } from '../controller/types.js';
import { keyOf } from '../controller/types.js';
import type { Sealer } from '../crypto.js';
import { ApiError, notFound } from '../errors.js';
import { tx, type Db } from './db.js';
import { apps, envHistory, envVars, nowIso, type EnvVarRow } from './schema/index.js';

export const ENV_VALUE_MAX_BYTES = 64 * 1024;

export interface EnvInput {
  key: string;
  /** Undefined keeps the current value (manifests without a secret's value); a new key starts empty. */
  value?: string;
  /** Undefined keeps the current flag; a new key starts false. */
  isSecret?: boolean;
  required?: boolean;
}

function appOf(db: Db, appId: number) {
  const app = db.select({ id: apps.id, name: apps.name }).from(apps).where(eq(apps.id, appId)).get();
  if (!app) throw notFound('app');
  return app;
}

const getVar = (db: Db, appId: number, key: string) =>
  db.select().from(envVars).where(and(eq(envVars.appId, appId), eq(envVars.key, key))).get();

/** The plaintext of a variable (decrypting a secret). Callers must never log it. */
export const plainValue = (sealer: Sealer, row: EnvVarRow): string =>
  row.isSecret ? (row.secretSealed ? sealer.open(row.secretSealed) : '') : (row.value ?? '');

const bump = (db: Db, appId: number) =>
  db.update(apps).set({ configVersion: sql`${apps.configVersion} + 1`, updatedAt: nowIso() }).where(eq(apps.id, appId)).run();

/**
 * Creates or updates one variable. Returns the stored row and whether it is new (201) or not (200).
 * Setting exactly what is stored is a no-op: no history line, no config change, no enqueue.
 */
export function setEnv(db: Db, sealer: Sealer, enqueue: Enqueue, appId: number, input: EnvInput, changedBy: string | null) {
  if (input.value !== undefined && Buffer.byteLength(input.value, 'utf8') > ENV_VALUE_MAX_BYTES) {
    // A validation error (400), not 413: the request was small enough to read, one field is too long.
    const message = `larger than ${ENV_VALUE_MAX_BYTES} bytes (64 KiB)`;
    throw new ApiError(400, 'invalid_request', `value: ${message}`, { issues: [{ path: 'value', message }], max_bytes: ENV_VALUE_MAX_BYTES });
  }
  const app = appOf(db, appId);
  const result = tx(db, () => {
    const current = getVar(db, appId, input.key);
    const value = input.value ?? (current ? plainValue(sealer, current) : '');
    const isSecret = input.isSecret ?? current?.isSecret ?? false;
    const required = input.required ?? current?.required ?? false;
    if (current && current.isSecret === isSecret && current.required === required && plainValue(sealer, current) === value) {
      return { row: current, created: false, changed: false };
    }
    const now = nowIso();
    const stored = {
      value: isSecret ? null : value,
      secretSealed: isSecret && value !== '' ? sealer.seal(value) : null,
      isSecret,
      required,
      updatedAt: now,
    };
    const row = current
      ? db.update(envVars).set(stored).where(eq(envVars.id, current.id)).returning().get()
      : db.insert(envVars).values({ appId, key: input.key, ...stored }).returning().get();
    db.insert(envHistory)
      .values({ appId, key: input.key, action: current ? 'updated' : 'created', isSecret, required, value: stored.value, changedAt: now, changedBy })
      .run();
    bump(db, appId);
    return { row, created: !current, changed: true };
  });
  if (result.changed) enqueue(keyOf('app', app.name));
  return { row: result.row, created: result.created };
}

/** Removes a variable (404 when absent), recording the deletion in its history. */
export function deleteEnv(db: Db, enqueue: Enqueue, appId: number, key: string, changedBy: string | null): void {
  const app = appOf(db, appId);
  tx(db, () => {
    const current = getVar(db, appId, key);
    if (!current) throw notFound('environment variable');
    db.delete(envVars).where(eq(envVars.id, current.id)).run();
    db.insert(envHistory)
      .values({ appId, key, action: 'deleted', isSecret: current.isSecret, required: current.required, value: current.isSecret ? null : current.value, changedAt: nowIso(), changedBy })
      .run();
    bump(db, appId);
  });
  enqueue(keyOf('app', app.name));
}

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
