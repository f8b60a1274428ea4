// Manifest endpoints (API.md "Manifests"): POST /api/manifests/apply runs the one apply path
// (src/manifests/apply.ts) for the `api` source; GET /api/manifests shows every source's last apply.
// The body is raw YAML (Content-Type application/yaml) or JSON {content | files, dry_run?, prune?,
// prune_services?}; `?dry_run=true`, `?prune=true` and `?prune_services=true` work for both.
import { Hono } from 'hono';
import { z } from 'zod';
import { badRequest } from '../errors.js';
import { applyManifests } from '../manifests/apply.js';
import { listSourceRecords } from '../manifests/record.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { body } from '../http/request.js';
import { operations } from './openapi/operation.js';
import { manifestApplyJsonSchema, manifestSourceJsonSchema } from '../presenters/manifests.js';

const op = operations('Manifests');

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

/** `files` (an extension of the contract) keeps file names, so each file of `svc apply -f DIR` is atomic. */
const jsonSchema = z
  .object({
    content: z.string().optional(),
    files: z
      .array(z.object({ name: z.string().min(1).max(255), content: z.string() }).strict())
      .max(2000)
      .optional(),
    dry_run: z.boolean().optional(),
    prune: z.boolean().optional(),
    prune_services: z.boolean().optional(),
    allow_upgrade: z.boolean().optional(),
  })
  .strict()
  .refine((b) => (b.content === undefined) !== (b.files === undefined), { message: 'send exactly one of content or files' });

const flag = (v: string | undefined) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes');

export function manifestRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.post('/manifests/apply', op({ summary: 'Apply manifests (YAML or JSON): the result of each resource', body: jsonSchema, query: { dry_run: 'true: say what would change', prune: 'true: delete apps no manifest names', prune_services: 'true: and services', allow_upgrade: 'true: a later declared service version starts its guarded upgrade' }, response: manifestApplyJsonSchema, errors: { 409: 'conflict: a resource owned by another source' } }), async (c) => {
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
    let files: { file: string; text: string }[];
    let opts: { dry_run?: boolean; prune?: boolean; prune_services?: boolean; allow_upgrade?: boolean } = {};
    if (YAML_TYPES.has(type)) files = [{ file: 'request', text: await c.req.text() }];
    else if (type === 'application/json' || type === '') {
      const input = await body(c, jsonSchema);
      files = input.files ? input.files.map((f) => ({ file: f.name, text: f.content })) : [{ file: 'request', text: input.content ?? '' }];
      opts = input;
    } else throw badRequest('send application/yaml or application/json');
    const q = (name: string) => flag(c.req.query(name));
    const prune = q('prune') ?? opts.prune ?? false;
    const result = applyManifests(deps, {
      source: 'api',
      location: 'POST /api/manifests/apply',
      files,
      dryRun: q('dry_run') ?? opts.dry_run ?? false,
      prune,
      pruneServices: q('prune_services') ?? opts.prune_services ?? false,
      allowUpgrade: q('allow_upgrade') ?? opts.allow_upgrade ?? false,
    });
    return c.json(result);
  });

  r.get('/manifests', op({ summary: 'What each manifest source last applied', response: z.array(manifestSourceJsonSchema) }), (c) => c.json(listSourceRecords(deps.db)));

  return r;
}
