// Live logs of an app as Server-Sent Events (API.md "Logs"). Follows whichever container is live,
// across deploys and heals; every engine stream is aborted when the client leaves or the container changes.
import { Hono, type Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { z } from 'zod';
import { notFound, unavailable } from '../errors.js';
import { parseInput } from '../desired/parse.js';
import { getApp } from '../store/apps.js';
import { readInstances } from '../observed/apps.js';
import type { Runtime } from '../runtime/runtime.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { idParam } from '../http/request.js';
import { operations } from './openapi/operation.js';

const op = operations('Logs');

const KEEPALIVE_MS = 15_000;
/** How often the followed containers are compared with the app's replicas. */
const RECHECK_MS = 5_000;
const querySchema = z.object({ tail: z.coerce.number().int().min(0).max(10_000).default(100) });

export function logRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  r.get('/apps/:appID/logs/stream', op({ summary: "The app's live log lines as Server-Sent Events", query: { tail: 'lines of history first (0-10000, default 100)' }, media: { type: 'text/event-stream', description: 'status events (connected, switched), then stdout and stderr events, one per line' }, errors: { 400: 'invalid_request: tail out of range', 503: 'engine_unavailable' } }), (c) => appLogStream(deps, c, idParam(c, 'appID', 'app')));
  return r;
}

/** The live log stream of app `appId` (also a stack service's: src/api/stacks.ts). */
export function appLogStream(deps: ApiDeps, c: Context<ApiEnv>, appId: number) {
  if (!getApp(deps.db, appId)) throw notFound('app');
  const { tail } = parseInput(querySchema, c.req.query());
  const runtime = deps.runtime;
  if (!runtime) throw unavailable('engine_unavailable', 'the container engine is not available');
  const liveName = () => getApp(deps.db, appId)?.liveContainerName ?? null;
  const seen = new Set<string>();

  return streamSSE(c, async (stream) => {
    await stream.writeSSE({ event: 'status', data: 'connected' });
    // Container name -> its follower. Every replica is followed (issue 19: on a Swarm a replica may run on
    // another node; the runtime's logs reach it there); lines of replica N >= 1 are prefixed `[rN] `.
    const followers = new Map<string, { abort: AbortController; ended: boolean }>();
    let live: string | null = null;
    const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
    let changed: () => void = () => {};
    const off = deps.bus?.on('live', (id) => id === appId && changed());
    const done = new Promise<void>((resolve) => stream.onAbort(resolve));
    try {
      for (let first = true; !stream.aborted; first = false) {
        const name = liveName();
        if (name !== live && !first) await stream.writeSSE({ event: 'status', data: 'switched' });
        live = name;
        const want = followedContainers(name, readInstances(deps.db, appId));
        for (const [n, f] of followers) {
          if (want.has(n) && !f.ended) continue;
          f.abort.abort();
          followers.delete(n);
        }
        for (const [n, slot] of want) {
          if (followers.has(n)) continue;
          // A replica already followed whose stream ended (it stopped, then was healed): only new lines.
          const f = { abort: new AbortController(), ended: false };
          const again = !first && (n === name || slot > 0) && seen.has(n);
          seen.add(n);
          followers.set(n, f);
          void pump(runtime, n, first ? tail : again ? 0 : 100, f.abort.signal, stream, slot > 0 ? `[r${slot}] ` : '').finally(() => (f.ended = true));
        }
        // Sleep until the live container changes, the client leaves, or a re-check is due (replicas added,
        // removed or restarted do not announce themselves here).
        await Promise.race([done, new Promise<void>((resolve) => ((changed = resolve), setTimeout(resolve, RECHECK_MS).unref()))]);
      }
    } finally {
      clearInterval(keepalive);
      off?.();
      for (const f of followers.values()) f.abort.abort();
    }
  });
}

/** Pure: the containers to follow: the live one (slot 0) and every replica row's container. */
export function followedContainers(live: string | null, replicas: { slot: number; containerName: string | null }[]): Map<string, number> {
  const out = new Map<string, number>();
  if (live) out.set(live, 0);
  for (const r of replicas) if (r.containerName && !out.has(r.containerName)) out.set(r.containerName, r.slot);
  return out;
}

/** Copies one container's log lines into the SSE stream until aborted or the container stops. */
async function pump(runtime: Runtime, container: string, tail: number, signal: AbortSignal, stream: SSEStreamingApi, prefix: string) {
  try {
    for await (const line of runtime.logs(container, { follow: true, tail, signal })) {
      if (signal.aborted || stream.aborted) break;
      await stream.writeSSE({ event: line.stream, id: line.time, data: prefix + line.line });
    }
  } catch {
    // The container went away mid-stream; the loop above picks up the next live one.
  }
}
