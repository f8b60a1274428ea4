// The JSON shape of a pull-request preview as GET /api/apps/{id}/previews lists it.
import { z } from 'zod';
import type { previewsWithApps } from '../store/previews.js';

export const previewJsonSchema = z.object({
  pr_number: z.number().int(), app_id: z.number().int(), app: z.string(), head_sha: z.string().nullable(), head_ref: z.string().nullable(), fork: z.boolean(),
  last_commit_at: z.string().nullable(), created_at: z.string(), access_url: z.string().nullable(), status: z.string(),
});

type PreviewWithApp = ReturnType<typeof previewsWithApps>[number];

/** One preview, with the address it is reached at and its app's status (both looked up by the edge). */
export const previewJson = (p: PreviewWithApp, accessUrl: string | null, status: string) => ({
  pr_number: p.preview.prNumber, app_id: p.preview.appId, app: p.name, head_sha: p.preview.headSha, head_ref: p.preview.headRef,
  fork: p.preview.fork, last_commit_at: p.preview.lastCommitAt, created_at: p.preview.createdAt,
  access_url: accessUrl, status,
});
