// The shapes of the Swarm node answers (docs/api.md "Nodes"): cluster/nodes.ts builds the node list, a node
// event is mapped here; both as schemas for the OpenAPI document.
import { z } from 'zod';
import type { NodeEventRow } from '../store/node-events.js';

export const nodeJsonSchema = z
  .object({
    id: z.string(),
    hostname: z.string(),
    address: z.string(),
    role: z.enum(['manager', 'worker']),
    leader: z.boolean(),
    availability: z.string().describe('active, pause or drain'),
    state: z.string().describe('ready, down, ... as Swarm says'),
    labels: z.record(z.string(), z.string()),
    engine_version: z.string(),
    cpus: z.number(),
    memory_mb: z.number(),
    replicas: z.array(z.object({ app: z.string().optional(), service: z.string().optional(), container: z.string() })).describe("this instance's app replicas and services running there"),
    down_since: z.string().nullable().describe('when svc saw the node go down, while it has not come back'),
  })
  .meta({ id: 'Node' });

export const nodeEventJsonSchema = z
  .object({ id: z.number().int(), node_id: z.string(), hostname: z.string(), kind: z.enum(['down', 'up']), state: z.string(), at: z.string() })
  .meta({ id: 'NodeEvent' });

export const joinCommandJsonSchema = z
  .object({ role: z.enum(['worker', 'manager']), command: z.array(z.string()), command_line: z.string().describe('carries the join token') })
  .meta({ id: 'NodeJoinCommand' });

export function nodeEventJson(r: NodeEventRow) {
  return { id: r.id, node_id: r.nodeId, hostname: r.hostname, kind: r.kind, state: r.state, at: r.timestamp };
}
