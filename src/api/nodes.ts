// Node endpoints (API.md "Nodes", issue 19): the machines of a Swarm, the join command, a node's
// availability and labels. Thin adapters over src/cluster/nodes.ts; Swarm itself holds this state (a
// change is recorded and applied by the node reconciler, which the PUT waits for).
import { Hono } from 'hono';
import { unavailable } from '../errors.js';
import { listNodes } from '../cluster/nodes.js';
import { joinCommand, nodeEvents, updateNode } from '../desired/nodes.js';
import { nodeEventJson } from '../presenters/nodes.js';
import { jsonBody } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { z } from 'zod';
import { operations } from './openapi/operation.js';
import { joinCommandJsonSchema, nodeEventJsonSchema, nodeJsonSchema } from '../presenters/nodes.js';
import { nodeChangeSchema } from '../desired/nodes.js';

const op = operations('Nodes');

export function nodeRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const runtime = () => {
    if (!deps.runtime) throw unavailable('engine_unavailable', 'the container engine is not available');
    return deps.runtime;
  };
  r.get('/nodes', op({ summary: 'The machines of the Swarm', response: z.array(nodeJsonSchema), errors: { 503: 'engine_unavailable' } }), async (c) => c.json(await listNodes(runtime(), deps.db)));
  // The stored history: readable without the engine.
  r.get('/nodes/events', op({ summary: 'Node events, newest first', query: { limit: 'at most this many' }, response: z.array(nodeEventJsonSchema), errors: { 400: 'invalid_request: a bad limit' } }), (c) => c.json(nodeEvents(deps.db, c.req.query('limit')).map(nodeEventJson)));
  r.post('/nodes/join', op({ summary: 'The command that joins a machine (carries the join token)', body: z.object({ role: z.enum(['worker', 'manager']).optional() }), response: joinCommandJsonSchema, errors: { 409: 'conflict: this engine is not a Swarm manager', 503: 'engine_unavailable' } }), async (c) => {
    return c.json(await joinCommand(runtime(), await jsonBody(c)));
  });
  r.put('/nodes/:id', op({ summary: "Change a node's availability or labels (waits for the node reconciler)", body: nodeChangeSchema, response: nodeJsonSchema, errors: { 409: 'conflict', 503: 'engine_unavailable' } }), async (c) =>
    c.json(await updateNode(runtime(), c.req.param('id'), await jsonBody(c), { db: deps.db, enqueue: deps.enqueue, bus: deps.bus, signal: c.req.raw.signal })),
  );
  return r;
}
