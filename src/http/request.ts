// Reading a request at the edge: the JSON body (through a command's or a route's zod schema), integer
// path ids, and where the request says it came from. Shared by the REST API and the UI.
import type { Context } from 'hono';
import type { z } from 'zod';
import { invalid, notFound } from '../errors.js';
import { parseInput } from '../desired/parse.js';
import type { Origin } from '../desired/context.js';

/** The body as JSON (empty is `{}`); 400 `invalid_request` when it is not JSON. */
export async function jsonBody(c: Context): Promise<unknown> {
  try {
    const text = await c.req.text();
    return text === '' ? {} : JSON.parse(text);
  } catch {
    throw invalid('request body is not valid JSON');
  }
}

/** The body parsed by `schema` (400 with the zod issues in `details.issues` otherwise). */
export async function body<S extends z.ZodTypeAny>(c: Context, schema: S): Promise<z.infer<S>> {
  return parseInput(schema, await jsonBody(c));
}

/** An integer path id (SQLite rowid); anything else is a 404, as API.md says. */
export function idParam(c: Context, name: string, what: string): number {
  const v = c.req.param(name) ?? '';
  if (!/^[1-9][0-9]{0,15}$/.test(v)) throw notFound(what);
  return Number(v);
}

/**
 * The origin of a REST request: the CLI says `X-Svc-Origin: cli`; everything else is `api`. Only `cli`
 * is taken from the header: a client cannot pass itself off as a manifest, a webhook or the schedule.
 */
export const restOrigin = (c: Context): Origin => (c.req.header('x-svc-origin')?.trim().toLowerCase() === 'cli' ? 'cli' : 'api');
