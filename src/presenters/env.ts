// The JSON shape of an app's environment variable: a secret's value is never in it.
import type { EnvVarRow } from '../store/schema/index.js';

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
