// The pure diff of one Stack document against the stack as it is (issue 32): whether its Compose file and
// its variables change, and the body the stacks command is given (POST /api/stacks on create, PUT on
// update, only what changed). What the change does to each service is the stacks command's own plan,
// asked by apply.ts; a stack whose file and variables are unchanged is not touched (no stack deploy).
// `variables` absent: not managed; present: the complete list, an entry without `value` keeps the stored
// value and without `is_secret` / `required` the stored flag, as an App's `env`.
import type { StackSpec } from './schema.js';
import type { CurrentStack } from './state.js';

export interface StackDiff {
  /** `compose`, `variables.KEY`. */
  changes: string[];
  /** The stacks command's input: the whole stack (create) or what changed (update). */
  body: { compose?: string; variables?: { key: string; value?: string; is_secret?: boolean; required?: boolean }[] };
}

export function diffStack(spec: StackSpec, current: CurrentStack | undefined): StackDiff {
  if (!current) return { changes: [], body: { compose: spec.compose, variables: spec.variables ?? [] } };
  const changes: string[] = [];
  const body: StackDiff['body'] = {};
  if (current.compose !== spec.compose) {
    changes.push('compose');
    body.compose = spec.compose;
  }
  if (spec.variables) {
    const byKey = new Map(current.variables.map((v) => [v.key, v]));
    for (const v of spec.variables) {
      const c = byKey.get(v.key);
      const differs = !c || (v.value !== undefined && v.value !== c.value) || (v.is_secret !== undefined && v.is_secret !== c.isSecret) || (v.required !== undefined && v.required !== c.required);
      if (differs) changes.push(`variables.${v.key}`);
    }
    const listed = new Set(spec.variables.map((v) => v.key));
    for (const c of current.variables) if (!listed.has(c.key)) changes.push(`variables.${c.key}`);
    if (changes.some((c) => c.startsWith('variables.'))) body.variables = spec.variables;
  }
  return { changes, body };
}
