// The JSON shape of an app's environment variable: a secret's value is never in it.
import type { envHistory, EnvVarRow } from '../store/schema/index.js';

type EnvHistoryRow = typeof envHistory.$inferSelect;
import { z } from 'zod';

export const envJsonSchema = z
  .object({
    key: z.string(),
    value: z.string().nullable().describe("null for a secret: its value leaves the server only through .../reveal"),
    is_secret: z.boolean(),
    required: z.boolean(),
    empty: z.boolean(),
    updated_at: z.string(),
  })
  .meta({ id: 'EnvVar' });

export const envHistorySchema = z.object({
  key: z.string(), action: z.enum(['created', 'updated', 'deleted']), is_secret: z.boolean(), required: z.boolean(), value: z.string().nullable(), changed_at: z.string(), changed_by: z.string().nullable(),
});

/** One change of a variable: a secret's value is never in it either. */
export const envHistoryJson = (h: EnvHistoryRow) => ({
  key: h.key,
  action: h.action,
  is_secret: h.isSecret,
  required: h.required,
  value: h.isSecret ? null : h.value,
  changed_at: h.changedAt,
  changed_by: h.changedBy,
});

/** The API shape of a variable: a secret's value is never in it. */
export const envJson = (v: EnvVarRow) => ({
  key: v.key,
  value: v.isSecret ? null : v.value,
  is_secret: v.isSecret,
  required: v.required,
  /** No value (a secret's too, without revealing it): a required empty variable blocks deploys. */
  empty: v.isSecret ? v.secretSealed === null : !v.value,
  updated_at: v.updatedAt,
});
