// Deploy endpoints (API.md "Deploys"). Handlers only write the intent (a pending deploy) and enqueue the
// app; the app reconciler runs the pipeline. Event streams read the database and wake on the bus.
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { ApiError, conflict, notFound } from '../errors.js';
import type { AppRow, DeployTrigger } from '../store/schema/index.js';
import { getApp } from '../store/apps.js';
import { shownImageRef, type AppView } from '../store/app-view.js';
import {
  createDeploy, deployEventJson, getDeploy, lastSuccessful, listDeployEvents, listDeploys,
} from '../store/deploys.js';
import { missingRequired } from '../store/env.js';
import { deployJson } from './deploy-json.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { body, idParam, imageRefSchema } from './validate.js';
import { isImageRef } from '../runtime/references.js';
import { builtImage } from '../codehost/repository.js';

export const triggerSchema = z
  .object({
    image_ref: imageRefSchema.optional(),
    commit_sha: z.string().regex(/^[0-9a-f]{7,64}$/i, 'must be a hex commit id').optional(),
  })
  .strict();

const FINAL = new Set(['success', 'failed', 'auto_rollback', 'cancelled']);

/**
 * Queues a deploy of `app` after the checks every trigger shares: a deployable app type, an image, and
 * (for manual and rollback triggers) every required variable set. A webhook deploy is created anyway
 * and fails at its `validate` step, so the failure is visible where the push is.
 */
export function requestDeploy(deps: Pick<ApiDeps, 'db' | 'enqueue' | 'bus'>, app: AppView, input: { imageRef?: string | null; commitSha?: string | null; trigger: DeployTrigger }) {
  if (app.appType === 'external_service') throw conflict('an external_service app is not deployed by svc; it is only routed');
  // A svc_build app builds its branch head (or the given commit) unless an image is named explicitly.
  const build = app.buildMode === 'svc_build' && !input.imageRef && input.trigger !== 'rollback';
  const imageRef = build ? (input.commitSha ? builtImage(app.name, input.commitSha.toLowerCase()) : null) : (input.imageRef ?? shownImageRef(app));
  if (!imageRef && !build) throw new ApiError(400, 'invalid_request', 'image_ref is required: the app has no image yet');
  // An app written before references were validated may hold one the engine would refuse.
  if (imageRef && !isImageRef(imageRef)) {
    throw new ApiError(400, 'invalid_request', `image_ref ${JSON.stringify(imageRef)} is not a valid image reference; set a valid one on the app or the deploy`);
  }
  if (input.trigger !== 'webhook') {
    const missing = missingRequired(deps.db, app.id);
    if (missing.length > 0) {
      throw new ApiError(422, 'missing_required_env', `required environment variables are not set: ${missing.join(', ')}`, { missing });
    }
  }
  return createDeploy(deps.db, deps.enqueue, deps.bus, { appId: app.id, appName: app.name, imageRef, commitSha: input.commitSha, trigger: input.trigger });
}

/** Queues a rollback: the image of the newest successful deploy whose image differs from the live one; 409 without one. */
export function requestRollback(deps: ApiDeps, app: AppView) {
  const live = app.currentDeployId ? getDeploy(deps.db, app.currentDeployId)?.imageRef : undefined;
  const target = lastSuccessful(deps.db, app.id, live ?? null);
  if (!target?.imageRef) throw conflict('no earlier successful deploy with a different image to roll back to');
  return requestDeploy(deps, app, { imageRef: target.imageRef, commitSha: target.commitSha, trigger: 'rollback' });
}

export function deployRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const appOf = (id: number) => {
    const row = getApp(deps.db, id);
    if (!row) throw notFound('app');
    return row;
  };
  const deployOf = (id: number) => {
    const row = getDeploy(deps.db, id);
    if (!row) throw notFound('deploy');
    return row;
  };

  r.post('/apps/:appID/deploys', async (c) => {
    const app = appOf(idParam(c, 'appID', 'app'));
    const input = await body(c, triggerSchema);
    const deploy = requestDeploy(deps, app, { imageRef: input.image_ref, commitSha: input.commit_sha, trigger: 'manual' });
    return c.json(deployJson(deploy), 202);
  });

  r.post('/apps/:appID/deploys/rollback', (c) => c.json(deployJson(requestRollback(deps, appOf(idParam(c, 'appID', 'app')))), 202));

  r.get('/apps/:appID/deploys', (c) => {
    const app = appOf(idParam(c, 'appID', 'app'));
    return c.json(listDeploys(deps.db, app.id).map(deployJson));
  });

  r.get('/deploys/:deployID', (c) => c.json(deployJson(deployOf(idParam(c, 'deployID', 'deploy')))));

  r.get('/deploys/:deployID/events', (c) => {
    const deploy = deployOf(idParam(c, 'deployID', 'deploy'));
    return c.json(listDeployEvents(deps.db, deploy.id).map(deployEventJson));
  });

  // SSE: replays what happened, follows new events, and ends with `done` once the deploy is final.
  r.get('/deploys/:deployID/events/stream', (c) => {
    const deploy = deployOf(idParam(c, 'deployID', 'deploy'));
    return streamSSE(c, async (stream) => {
      let lastId = Number(c.req.header('last-event-id') ?? 0) || 0;
      let wake: (() => void) | undefined;
      const off = deps.bus?.on('deploy', (id) => id === deploy.id && wake?.());
      stream.onAbort(() => wake?.());
      try {
        while (!stream.aborted) {
          for (const e of listDeployEvents(deps.db, deploy.id, lastId)) {
            await stream.writeSSE({ event: 'deploy_event', id: String(e.id), data: JSON.stringify(deployEventJson(e)) });
            lastId = e.id;
          }
          const status = getDeploy(deps.db, deploy.id)?.status;
          if (!status || FINAL.has(status)) {
            if (listDeployEvents(deps.db, deploy.id, lastId).length > 0) continue;
            await stream.writeSSE({ event: 'done', data: JSON.stringify({ status: status ?? 'deleted' }) });
            break;
          }
          // Wake on the bus, or every 15 s to send a keepalive and re-read (no bus in some tests).
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), deps.bus ? 15_000 : 250);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (timedOut && !stream.aborted) await stream.write(': keepalive\n\n');
        }
      } finally {
        off?.();
      }
    });
  });

  return r;
}
