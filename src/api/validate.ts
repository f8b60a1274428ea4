// Request parsing at the edge: zod schemas in, typed values out, a 400 `invalid_request` with the zod
// issues in `details.issues` for anything else. Handlers never see unvalidated input.
import type { Context } from 'hono';
import { z } from 'zod';
import { ApiError, notFound } from '../errors.js';
import { ENV_VALUE_MAX_BYTES } from '../store/env.js';
import { IMAGE_REF_MAX, IMAGE_REF_PATTERN, isImageRef } from '../runtime/references.js';

export async function body<S extends z.ZodTypeAny>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_request', 'request body is not valid JSON');
  }
  return parse(schema, raw);
}

export function parse<S extends z.ZodTypeAny>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    const first = issues[0];
    throw new ApiError(400, 'invalid_request', first.path ? `${first.path}: ${first.message}` : first.message, { issues });
  }
  return result.data;
}

/** An integer path id (SQLite rowid); anything else is a 404, as API.md says. */
export function idParam(c: Context, name: string, what: string): number {
  const v = c.req.param(name) ?? '';
  if (!/^[1-9][0-9]{0,15}$/.test(v)) throw notFound(what);
  return Number(v);
}

// Shared field rules (API.md "Conventions").
export const nameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,62}$/, 'must start with a lowercase letter and contain only a-z, 0-9 and -, at most 63 characters');
export const portSchema = z.number().int().min(1).max(65535);
/** Copies of an app's web process (issue 19): 0 stops the app, 50 is the cap of one host. */
export const replicasSchema = z.number().int().min(0).max(50);
/**
 * Limits of each replica. The engine refuses a memory cap under 6 MiB; a CPU share is in cores with the
 * engine's precision (1e-9 core), and one above the host's CPUs fails the deploy with the engine's words.
 */
export const resourcesSchema = z
  .object({
    memory_mb: z.number().int().min(6).max(1_048_576).nullable().optional(),
    cpus: z.number().min(0.01).max(1024).nullable().optional(),
  })
  .strict();
export const envKeySchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'must match ^[A-Za-z_][A-Za-z0-9_]{0,255}$');
export const aliasSchema = z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'must match ^[A-Z][A-Z0-9_]{0,31}$');
/** An env value: at most 64 KiB of UTF-8 (a 400 like any field rule; 413 is only for whole bodies). */
export const envValueSchema = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= ENV_VALUE_MAX_BYTES, `larger than ${ENV_VALUE_MAX_BYTES} bytes (64 KiB)`);
/**
 * An image reference in the engine's grammar (`[registry[:port]/]path[:tag][@digest]`, path lowercase).
 * Every writer of an image reference (apps, deploys, manifests, webhooks) validates with this one, so no
 * value outside the grammar is stored or reaches the engine.
 */
const IMAGE_REF_RULE = 'must be an image reference the engine accepts: [registry[:port]/]name[:tag][@digest], name in lowercase';
export const imageRefSchema = z
  .string()
  .max(IMAGE_REF_MAX, IMAGE_REF_RULE)
  .regex(IMAGE_REF_PATTERN, IMAGE_REF_RULE)
  .refine(isImageRef, IMAGE_REF_RULE); // the name-length limit, which the pattern cannot express
export const domainSchema = z
  .string()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
    'must be a valid host name',
  )
  .transform((d) => d.toLowerCase());
