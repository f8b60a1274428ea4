// The field rules every command shares (API.md "Conventions"): names, ports, env keys and values,
// aliases, image references, domains. Commands and the manifest schema build their zod schemas from these.
import { z } from 'zod';
import { IMAGE_REF_MAX, IMAGE_REF_PATTERN, isImageRef } from '../runtime/references.js';

/** The largest env value: 64 KiB of UTF-8. */
export const ENV_VALUE_MAX_BYTES = 64 * 1024;

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
export const envKeySchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'must start with a letter or _ and contain only letters, digits and _, at most 256 characters');
export const aliasSchema = z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'must start with an uppercase letter and contain only A-Z, 0-9 and _, at most 32 characters');
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
