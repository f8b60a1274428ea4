// Input validation of every command: zod in, typed values out, a domain `invalid` (400
// `invalid_request`) with the zod issues in `details.issues` for anything else.
import type { z } from 'zod';
import { invalidIssues, type Issue } from '../errors.js';

/** A zod issue as the API shows it: path and sentence, plus the facts a form needs to say it in words. */
function issueOf(i: z.core.$ZodIssue): Issue {
  const out: Issue = { path: i.path.join('.'), message: i.message, code: i.code };
  const bound = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined);
  if (i.code === 'too_small' && i.origin === 'number') out.minimum = bound(i.minimum);
  if (i.code === 'too_big' && i.origin === 'number') out.maximum = bound(i.maximum);
  if (i.code === 'invalid_type') out.expected = i.expected;
  return out;
}

export function parseInput<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw invalidIssues(result.error.issues.map(issueOf));
  return result.data;
}
