// The env command: set and delete an app's variables, for the REST API, the UI and manifest applies. A
// secret's value exists only sealed (AES-256-GCM, `secret_sealed`); an empty secret is stored as no sealed
// value at all, so "is it missing" needs no key. Every change bumps the app's config version (it then
// shows `config_changed`) and enqueues the app; history keeps old non-secret values and never a secret one.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { keyOf } from '../controller/types.js';
import { notFound } from '../errors.js';
import { tx } from '../store/db.js';
import { appOf, getVar, plainValue } from '../store/env.js';
import { bumpConfigVersion } from '../store/services.js';
import { envHistory, envVars, nowIso } from '../store/schema/index.js';
import type { CommandCtx, Origin } from './context.js';
import { envKeySchema, envValueSchema } from './fields.js';
import { parseInput } from './parse.js';

/**
 * One variable. `value` absent keeps the current value (manifests without a secret's value; a new key
 * starts empty); `is_secret` / `required` absent keep the current flag (a new key: false).
 */
export const setEnvSchema = z
  .object({ key: envKeySchema, value: envValueSchema.optional(), is_secret: z.boolean().optional(), required: z.boolean().optional() })
  .strict();

/**
 * Creates or updates one variable; `changedBy` goes into its history (a username, `manifest:<source>`).
 * Returns the stored row and whether it is new (201) or not (200). Setting exactly what is stored is a
 * no-op: no history line, no config change, no enqueue.
 */
export function setEnv(ctx: CommandCtx, appId: number, raw: unknown, _origin: Origin, changedBy: string | null) {
  const { db, sealer } = ctx;
  const input = parseInput(setEnvSchema, raw);
  const app = appOf(db, appId);
  const result = tx(db, () => {
    const current = getVar(db, appId, input.key);
    const value = input.value ?? (current ? plainValue(sealer, current) : '');
    const isSecret = input.is_secret ?? current?.isSecret ?? false;
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
    bumpConfigVersion(db, appId);
    return { row, created: !current, changed: true };
  });
  if (result.changed) ctx.enqueue(keyOf('app', app.name));
  return { row: result.row, created: result.created };
}

/** Removes a variable (404 when absent), recording the deletion in its history. */
export function deleteEnv(ctx: CommandCtx, appId: number, key: string, _origin: Origin, changedBy: string | null): void {
  const { db } = ctx;
  const app = appOf(db, appId);
  tx(db, () => {
    const current = getVar(db, appId, key);
    if (!current) throw notFound('environment variable');
    db.delete(envVars).where(eq(envVars.id, current.id)).run();
    db.insert(envHistory)
      .values({ appId, key, action: 'deleted', isSecret: current.isSecret, required: current.required, value: current.isSecret ? null : current.value, changedAt: nowIso(), changedBy })
      .run();
    bumpConfigVersion(db, appId);
  });
  ctx.enqueue(keyOf('app', app.name));
}
