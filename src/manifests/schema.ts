// The manifest documents (API.md "Manifests"): Kubernetes-shaped `App`, `Service` and `Stack` documents whose
// `spec` holds the API's own field names and is validated by the commands' own zod rules (appFieldShape,
// nameSchema, envKeySchema, aliasSchema, src/desired/), so a manifest can never accept what POST /api/apps refuses.
// Unknown fields are errors: a typo in git must not silently become a default.
import { z } from 'zod';
import { appFieldShape } from '../desired/apps.js';
import { aliasSchema, envKeySchema, envValueSchema, nameSchema } from '../desired/fields.js';
import { SERVICE_TYPES } from '../store/schema/index.js';
import { SERVICE_VERSIONS } from '../catalog/types.js';
import { createStackSchema, stackNameSchema } from '../desired/stacks.js';

export const API_VERSION = 'svc/v1';

const metadata = z.object({ name: nameSchema }).strict();

/** One variable; without `value` the value set through the API is kept (secrets stay out of git). */
export const envEntrySchema = z
  .object({ key: envKeySchema, value: envValueSchema.optional(), is_secret: z.boolean().optional(), required: z.boolean().optional() })
  .strict();

/** A link to a service by its name, optionally under an alias for the injected variable names. */
export const linkEntrySchema = z.object({ name: nameSchema, alias: aliasSchema.optional() }).strict();

const unique = <T>(key: (t: T) => string, what: string) => (list: T[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const k = key(item);
    if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate ${what} ${k}` });
    seen.add(k);
  });
};

export const appSpecSchema = z
  .object({
    ...appFieldShape,
    env: z.array(envEntrySchema).superRefine(unique((e) => e.key, 'env key')).optional(),
    services: z.array(linkEntrySchema).superRefine(unique((l) => l.name, 'service')).optional(),
  })
  .partial()
  .strict();

export const appDocSchema = z
  .object({ apiVersion: z.literal(API_VERSION), kind: z.literal('App'), metadata, spec: appSpecSchema.default({}) })
  .strict();

export const serviceDocSchema = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Service'),
    metadata,
    spec: z
      .object({
        type: z.enum(SERVICE_TYPES),
        /** The version (postgres 15-18, mysql 8.0/8.4, redis 7/8, garage 1); absent: the newest at creation. */
        version: z.union([z.string(), z.number()]).transform(String).optional(),
      })
      .strict()
      .superRefine((spec, ctx) => {
        const offered = SERVICE_VERSIONS[spec.type];
        if (spec.version !== undefined && !offered.includes(spec.version)) {
          ctx.addIssue({ code: 'custom', path: ['version'], message: `${spec.type} is offered at versions ${offered.join(', ')}` });
        }
      }),
  })
  .strict();

/**
 * A stack (issue 32): its Compose file as text and its variables, the shape of POST /api/stacks. `variables`
 * absent: not managed by the manifest; present: the complete list, an entry without `value` keeps the
 * stored one (secrets stay out of git), as for an App's `env`.
 */
export const stackDocSchema = z
  .object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Stack'),
    metadata: z.object({ name: stackNameSchema }).strict(),
    spec: z
      .object({
        compose: createStackSchema.shape.compose.unwrap().unwrap(),
        variables: z.array(envEntrySchema).max(500).superRefine(unique((e) => e.key, 'variable')).optional(),
      })
      .strict(),
  })
  .strict();

export const manifestDocSchema = z.discriminatedUnion('kind', [appDocSchema, serviceDocSchema, stackDocSchema]);

export type AppSpec = z.infer<typeof appSpecSchema>;
export type AppDoc = z.infer<typeof appDocSchema>;
export type ServiceDoc = z.infer<typeof serviceDocSchema>;
export type StackDoc = z.infer<typeof stackDocSchema>;
export type StackSpec = StackDoc['spec'];
export type ManifestDoc = z.infer<typeof manifestDocSchema>;

/** The JSON Schema editors validate manifests with (published as docs/manifest.schema.json). */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestDocSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...schema, $id: 'https://svc.local/manifest.schema.json', title: 'svc manifest document (App, Service or Stack)' };
}
