// Live logs of an app as Server-Sent Events (API.md "Logs"). Follows whichever container is live,
// across deploys and heals; every engine stream is aborted when the client leaves or the container changes.
import { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { z } from 'zod';
import { notFound, unavailable } from '../errors.js';
import { parseInput } from '../desired/parse.js';
import { getApp } from '../store/apps.js';
import type { Runtime } from '../runtime/runtime.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { idParam } from '../http/request.js';

const KEEPALIVE_MS = 15_000;
const querySchema = z.object({ tail: z.coerce.number().int().min(0).max(10_000).default(100) });

export function logRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  r.get('/apps/:appID/logs/stream', (c) => {
    const appId = idParam(c, 'appID', 'app');
    if (!getApp(deps.db, appId)) throw notFound('app');
    const { tail } = parseInput(querySchema, c.req.query());
    const runtime = deps.runtime;
    if (!runtime) throw unavailable('engine_unavailable', 'the container engine is not available');
    const liveName = () => getApp(deps.db, appId)?.liveContainerName ?? null;

    return streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: 'status', data: 'connected' });
      let follower: AbortController | undefined;
      let current: string | null = null;
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
      let changed: () => void = () => {};
      const off = deps.bus?.on('live', (id) => id === appId && changed());
      const done = new Promise<void>((resolve) => stream.onAbort(resolve));
      try {
        for (let first = true; !stream.aborted; first = false) {
          const name = liveName();
          if (name !== current) {
            follower?.abort();
            if (!first) await stream.writeSSE({ event: 'status', data: 'switched' });
            current = name;
            follower = new AbortController();
            if (name) void pump(runtime, name, first ? tail : 100, follower.signal, stream);
          }
          // Sleep until the live container changes, the client leaves, or a slow re-check is due.
          await Promise.race([done, new Promise<void>((resolve) => ((changed = resolve), setTimeout(resolve, KEEPALIVE_MS).unref()))]);
        }
      } finally {
        clearInterval(keepalive);
        off?.();
        follower?.abort();
      }
    });
  });
  return r;
}

/** Copies one container's log lines into the SSE stream until aborted or the container stops. */
async function pump(runtime: Runtime, container: string, tail: number, signal: AbortSignal, stream: SSEStreamingApi) {
  try {
    for await (const line of runtime.logs(container, { follow: true, tail, signal })) {
      if (signal.aborted || stream.aborted) break;
      await stream.writeSSE({ event: line.stream, id: line.time, data: line.line });
    }
  } catch {
    // The container went away mid-stream; the loop above picks up the next live one.
  }
}
