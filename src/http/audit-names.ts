// What a handler adds to its request's audit line: the names of what it changed that the route's path does
// not say (docs/api.md "Audit log"). A variable set by `POST .../env` carries its name in the body, a webhook
// names no app in its path; the handler knows both, the middleware writes them after it. Names only, never
// a value: a variable's name is a name (`DATABASE_URL`), its value never passes through here.
import type { Context } from 'hono';

const KEY = 'auditNames';

/** Adds `names` (an app's, a variable's) to the target of this request's audit line. */
export function noteAuditNames(c: Context, ...names: string[]): void {
  const had = (c.get(KEY) as string[] | undefined) ?? [];
  c.set(KEY, [...had, ...names.filter((n) => n && !had.includes(n))]);
}

/** The names handlers noted for this request, in the order they were noted (none: empty). */
export const auditNamesOf = (c: Context): string[] => (c.get(KEY) as string[] | undefined) ?? [];
