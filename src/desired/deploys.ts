// The deploys command: queue a deploy or a rollback of an app, for the REST API (and the CLI through it),
// the UI, manifest applies and webhooks. Only the intent is written (a pending deploy, SPEC.md's trigger
// and the entry point's `origin`) and the app enqueued; the app reconciler runs the pipeline.
import { z } from 'zod';
import { builtImage } from '../codehost/repository.js';
import { conflict, invalid, notFound, unprocessable } from '../errors.js';
import { isImageRef } from '../runtime/references.js';
import { getApp } from '../store/apps.js';
import { shownImageRef, type AppView } from '../store/app-view.js';
import { createDeploy, rollbackTarget } from '../store/deploys.js';
import { missingRequired } from '../store/env.js';
import type { DeployRow, DeployTrigger } from '../store/schema/index.js';
import type { CommandCtx, Origin } from './context.js';
import { imageRefSchema } from './fields.js';
import { parseInput } from './parse.js';

/** What a caller may name for a manual deploy: an image, or a commit of a `svc_build` app. */
export const triggerSchema = z
  .object({
    image_ref: imageRefSchema.optional(),
    commit_sha: z.string().regex(/^[0-9a-f]{7,64}$/i, 'must be a hex commit id').optional(),
  })
  .strict();

export interface DeployRequest {
  imageRef?: string | null;
  commitSha?: string | null;
  trigger: DeployTrigger;
  /** A rollback: the successful deploy it runs again (image, provider port, environment snapshot). */
  rollbackOf?: DeployRow;
}

/**
 * Queues a deploy of `app` after the checks every trigger shares: a deployable app type, an image, and
 * (for manual and rollback triggers) every required variable set. A webhook deploy is created anyway
 * and fails at its `validate` step, so the failure is visible where the push is.
 */
export function requestDeploy(ctx: CommandCtx, app: AppView, input: DeployRequest, origin: Origin): DeployRow {
  if (app.appType === 'external_service') throw conflict('an external_service app is not deployed by svc; it is only routed');
  // A svc_build app builds its branch head (or the given commit) unless an image is named explicitly.
  const build = app.buildMode === 'svc_build' && !input.imageRef && input.trigger !== 'rollback';
  const imageRef = build ? (input.commitSha ? builtImage(app.name, input.commitSha.toLowerCase()) : null) : (input.imageRef ?? shownImageRef(app));
  if (!imageRef && !build) throw invalid('image_ref is required: the app has no image yet');
  // An app written before references were validated may hold one the engine would refuse.
  if (imageRef && !isImageRef(imageRef)) {
    throw invalid(`image_ref ${JSON.stringify(imageRef)} is not a valid image reference; set a valid one on the app or the deploy`);
  }
  // A rollback runs the environment its target ran (its snapshot), so today's required variables do not apply.
  const restoresEnv = input.rollbackOf?.envSnapshotSealed != null;
  if (input.trigger !== 'webhook' && !restoresEnv) {
    const missing = missingRequired(ctx.db, app.id);
    if (missing.length > 0) {
      throw unprocessable('missing_required_env', `required environment variables are not set: ${missing.join(', ')}`, { missing });
    }
  }
  return createDeploy(ctx.db, ctx.enqueue, ctx.bus, {
    appId: app.id, appName: app.name, imageRef, commitSha: input.commitSha, trigger: input.trigger, origin, rollbackOf: input.rollbackOf,
  });
}

function appOf(ctx: CommandCtx, appId: number): AppView {
  const app = getApp(ctx.db, appId);
  if (!app) throw notFound('app');
  return app;
}

/** A manual deploy of app `appId` from an API-shaped input (`image_ref`, `commit_sha`). */
export function deployApp(ctx: CommandCtx, appId: number, raw: unknown, origin: Origin): DeployRow {
  const app = appOf(ctx, appId);
  const input = parseInput(triggerSchema, raw);
  return requestDeploy(ctx, app, { imageRef: input.image_ref, commitSha: input.commit_sha, trigger: 'manual' }, origin);
}

/**
 * Queues a rollback to the newest successful deploy whose image differs from the live one (409 without one):
 * it runs exactly what that deploy ran, its image, the port its build provider chose (a built static site
 * listens on 80, not on the spec's internal_port) and its environment snapshot, never a rebuild.
 */
export function rollbackApp(ctx: CommandCtx, appId: number, origin: Origin): DeployRow {
  const app = appOf(ctx, appId);
  const target = rollbackTarget(ctx.db, app.id, app.currentDeployId);
  if (!target?.imageRef) throw conflict('no earlier successful deploy with a different image to roll back to');
  return requestDeploy(ctx, app, { imageRef: target.imageRef, commitSha: target.commitSha, trigger: 'rollback', rollbackOf: target }, origin);
}
