// Input validation of every command: zod in, typed values out, a domain `invalid` (400
// `invalid_request`) with the zod issues in `details.issues` for anything else.
import type { z } from 'zod';
import { invalidIssues } from '../errors.js';

export function parseInput<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw invalidIssues(result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  return result.data;
}
