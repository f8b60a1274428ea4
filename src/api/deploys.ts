// Deploy endpoints (API.md "Deploys"): adapters over the deploys command (src/desired/deploys.ts), which
// writes the intent (a pending deploy) and enqueues the app; the app reconciler runs the pipeline. Event
// streams read the database and wake on the bus.
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { notFound } from '../errors.js';
import { deployApp, rollbackApp } from '../desired/deploys.js';
import { getApp } from '../store/apps.js';
import { getDeploy, listDeployEvents, listDeploys } from '../store/deploys.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { deployJson } from '../presenters/deploy-json.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { deployEventJson } from '../presenters/deploy-json.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { deployEventJsonSchema, deployJsonSchema } from '../presenters/deploy-json.js';
import { triggerSchema } from '../desired/deploys.js';

const op = operations('Deploys');

const FINAL = new Set(['success', 'failed', 'auto_rollback', 'cancelled']);
const KEEPALIVE_MS = 15_000;

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

  r.post('/apps/:appID/deploys', op({ summary: 'Deploy the app (an image, or its branch head); the app reconciler runs it', body: triggerSchema, status: 202, response: deployJsonSchema, errors: { 409: 'conflict: a deploy is running, or nothing to deploy', 422: 'a required variable is empty' } }), async (c) => {
    const id = idParam(c, 'appID', 'app');
    return c.json(deployJson(deployApp(deps, id, await jsonBody(c), restOrigin(c))), 202);
  });

  r.post('/apps/:appID/deploys/rollback', op({ summary: 'Roll back to the previous successful deploy', status: 202, response: deployJsonSchema, errors: { 409: 'conflict: nothing to roll back to, or a deploy is running', 422: 'missing_required_env: a required variable is empty' } }), (c) => c.json(deployJson(rollbackApp(deps, idParam(c, 'appID', 'app'), restOrigin(c))), 202));

  r.get('/apps/:appID/deploys', op({ summary: "The app's deploys, newest first", response: z.array(deployJsonSchema) }), (c) => {
    const app = appOf(idParam(c, 'appID', 'app'));
    return c.json(listDeploys(deps.db, app.id).map(deployJson));
  });

  r.get('/deploys/:deployID', op({ summary: 'One deploy', response: deployJsonSchema }), (c) => c.json(deployJson(deployOf(idParam(c, 'deployID', 'deploy')))));

  r.get('/deploys/:deployID/events', op({ summary: "A deploy's steps", response: z.array(deployEventJsonSchema) }), (c) => {
    const deploy = deployOf(idParam(c, 'deployID', 'deploy'));
    return c.json(listDeployEvents(deps.db, deploy.id).map(deployEventJson));
  });

  // SSE: replays what happened, follows new events, and ends with `done` once the deploy is final.
  r.get('/deploys/:deployID/events/stream', op({ summary: "A deploy's steps as Server-Sent Events (`deploy_event`, then `done`)", media: { type: 'text/event-stream', description: 'deploy_event events (DeployEvent JSON), then one done event {status}' } }), (c) => {
    const deploy = deployOf(idParam(c, 'deployID', 'deploy'));
    return streamSSE(c, async (stream) => {
      let lastId = Number(c.req.header('last-event-id') ?? 0) || 0;
      let wake: (() => void) | undefined;
      const off = deps.bus.on('deploy', (id) => id === deploy.id && wake?.());
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
          // Wake on the bus, or every 15 s to send a keepalive and re-read.
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), KEEPALIVE_MS);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (timedOut && !stream.aborted) await stream.write(': keepalive\n\n');
        }
      } finally {
        off();
      }
    });
  });

  return r;
}
