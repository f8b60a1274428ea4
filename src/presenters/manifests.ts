// The shapes of the manifest answers (docs/api.md "Manifests"; manifests/apply.ts ApplyResult and
// manifests/record.ts listSourceRecords build them) as schemas for the OpenAPI document.
import { z } from 'zod';

const SOURCES = ['dir', 'git', 'api'] as const;

export const manifestErrorJsonSchema = z
  .object({
    file: z.string(),
    document: z.number().int().describe('index of the document in its file; -1: the file or the source as a whole'),
    path: z.string(),
    message: z.string(),
  })
  .meta({ id: 'ManifestError' });

export const manifestApplyJsonSchema = z
  .object({
    source: z.enum(SOURCES),
    revision: z.string().describe('the git commit, or a hash of the content'),
    dry_run: z.boolean(),
    resources: z.array(
      z.object({
        kind: z.enum(['App', 'Service', 'Stack']),
        name: z.string(),
        action: z.enum(['create', 'update', 'delete', 'unchanged']),
        changes: z.array(z.string()),
        file: z.string().optional().describe('the file that declares it (none for deletions)'),
        note: z.string().optional(),
        deploy: z.string().optional().describe('the image this apply deploys'),
        deploy_id: z.number().int().optional().describe('the deploy it queued (not in a dry run)'),
        services: z
          .array(z.object({ service: z.string(), action: z.string(), changes: z.array(z.string()) }))
          .optional()
          .describe("a Stack: what its change does to each service (the stacks command's plan)"),
        stack_id: z.number().int().optional().describe('a Stack, in an apply (not a dry run): its id'),
        stack_deploy_id: z.number().int().optional().describe('a Stack, in an apply: the stack deploy it queued'),
      }),
    ),
    errors: z.array(manifestErrorJsonSchema),
  })
  .meta({ id: 'ManifestApply' });

export const manifestSourceJsonSchema = z
  .object({
    source: z.enum(SOURCES),
    location: z.string(),
    revision: z.string().nullable(),
    applied_at: z.string(),
    resources: z.array(z.object({ kind: z.string(), name: z.string(), file: z.string().optional() })),
    errors: z.array(manifestErrorJsonSchema),
  })
  .meta({ id: 'ManifestSource' });
