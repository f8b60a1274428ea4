// What the authorize middleware writes into the audit log after a request that changed something or
// revealed a secret: who, from where, which route, on what, and the NAMES of the fields sent, never their
// values (a variable's name is a name: `vars.DATABASE_URL`, not its value).
import type { Context } from 'hono';
import type { Origin } from '../desired/context.js';
import { restOrigin } from './request.js';
import { clientAddress } from './transport.js';

const SMALL = 1024 * 1024;
const SKIP = new Set(['_csrf', 'password', 'current_password', 'new_password']);

/** The field names of an object, one level deep for nested objects (`vars.KEY`), never a value. */
export function namesOf(body: unknown): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (SKIP.has(k)) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const sub of Object.keys(v)) out.push(`${k}.${sub}`);
    else out.push(k);
  }
  return out.slice(0, 100).map((n) => n.slice(0, 100));
}

/** The names of the fields the request sent (JSON or a form), or none for anything else or large. */
export async function sentFieldNames(c: Context): Promise<string[]> {
  if (c.req.method === 'GET') return [];
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  const length = Number(c.req.header('content-length') ?? 0);
  if (length > SMALL) return [];
  try {
    if (type === 'application/json') {
      const text = await c.req.text();
      return text ? namesOf(JSON.parse(text)) : [];
    }
    if (type === 'application/x-www-form-urlencoded') return namesOf(await c.req.parseBody());
  } catch {
    return [];
  }
  return [];
}

/** Where a request came from: a UI form, a webhook, or the REST API (the CLI says so in a header). */
export function requestOrigin(c: Context): Origin {
  const path = c.req.path;
  if (path.startsWith('/api/webhooks/')) return 'webhook';
  if (!path.startsWith('/api/')) return 'ui';
  return restOrigin(c);
}

export const requestAddress = (c: Context): string => clientAddress(c);
