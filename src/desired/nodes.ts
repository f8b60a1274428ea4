// The nodes commands (issue 19 "Many hosts on Docker Swarm"): a node's availability and labels, the
// `docker swarm join` command for a new machine, and the node events. Swarm holds this state, not svc's
// database: these functions validate, ask the Runtime port, and turn its refusals into domain errors. A change
// of a node is desired state: recorded (node_specs), applied by the node reconciler (`node:<ref>`), and waited
// for. With SVC_RUNTIME=docker there is one node (the engine) and nothing to change or join (409 `not_a_swarm`).
// The listing (what runs where) is src/cluster/nodes.ts.
import { z } from 'zod';
import { conflict, DomainError, notFound, unavailable } from '../errors.js';
import { keyOf, type Key } from '../controller/types.js';
import type { Bus } from '../controller/bus.js';
import { nodeOutcome, recordNodeChange } from '../store/node-specs.js';
import { parseInput } from './parse.js';
import type { Db } from '../store/db.js';
import { listNodeEvents } from '../store/node-events.js';
import { listNodes, type NodeJson } from '../cluster/nodes.js';
import { NoSuchNodeError, NotASwarmError, type Runtime } from '../runtime/runtime.js';

/** GET /api/nodes/events: the newest `limit` (1..500, default 50) node events, newest first. */
export function nodeEvents(db: Db, rawLimit: string | undefined) {
  const limit = parseInput(z.coerce.number().int().min(1).max(500).default(50), rawLimit === undefined || rawLimit === '' ? undefined : rawLimit);
  return listNodeEvents(db, limit);
}

/** Swarm's label grammar is loose; svc keeps keys and values to what a constraint can name safely. */
const labelKey = z.string().regex(/^[a-z0-9]([a-z0-9._-]{0,126}[a-z0-9])?$/i, 'a label key is letters, digits, dots, dashes and underscores (at most 128)');
const labelValue = z.string().max(256).regex(/^[^\u0000-\u001f]*$/, 'no control characters');

export const nodeChangeSchema = z
  .object({
    availability: z.enum(['active', 'drain', 'pause']).optional(),
    labels: z.record(labelKey, labelValue).refine((l) => Object.keys(l).length <= 64, 'at most 64 labels').optional(),
  })
  .strict()
  .refine((v) => v.availability !== undefined || v.labels !== undefined, 'give availability, labels or both');

/** A node id or host name as Swarm accepts it in a path. */
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a node change is recorded, announced and waited with. */
export interface NodeChangeCtx {
  db: Db;
  enqueue: (key: Key) => void;
  bus: Bus;
  /** The request's: a client that leaves stops waiting (the change is still applied). */
  signal?: AbortSignal;
}

/**
 * PUT /api/nodes/{id}: availability (drain moves the node's replicas off it) and labels. Records the change
 * and waits for the node reconciler to apply it, then answers the node as Swarm shows it (or the refusal).
 */
export async function updateNode(runtime: Runtime, id: string, raw: unknown, ctx: NodeChangeCtx): Promise<NodeJson> {
  const { db } = ctx;
  if (!NODE_ID.test(id)) throw notFound('node');
  const change = parseInput(nodeChangeSchema, raw);
  const generation = recordNodeChange(db, id, change);
  ctx.enqueue(keyOf('node', id));
  const outcome = await ctx.bus.until('node', () => nodeOutcome(db, id, generation), ctx.signal);
  if (!outcome) throw unavailable('node_change_pending', 'the node change is recorded and will be applied; the request ended first');
  if (outcome.code === 'not_a_swarm') throw new DomainError('conflict', 'not_a_swarm', outcome.error ?? 'not a Swarm');
  if (outcome.code === 'not_found') throw notFound('node');
  if (outcome.code === 'conflict') throw conflict(outcome.error ?? 'the node changed meanwhile; try again');
  if (outcome.code) throw new Error(outcome.error ?? 'the node change failed');
  const found = (await listNodes(runtime, db)).find((n) => n.id === id || n.hostname === id);
  if (!found) throw notFound('node');
  return found;
}

/** POST /api/nodes/join: the exact command to run on the new machine. */
export async function joinCommand(runtime: Runtime, raw: unknown): Promise<{ role: 'worker' | 'manager'; command: string[]; command_line: string }> {
  const { role } = parseInput(z.object({ role: z.enum(['worker', 'manager']).default('worker') }).strict(), raw ?? {});
  let info: { token: string; address: string };
  try {
    info = await runtime.joinInfo(role);
  } catch (err) {
    throw domainOf(err);
  }
  const command = ['docker', 'swarm', 'join', '--token', info.token, info.address];
  return { role, command, command_line: command.join(' ') };
}

function domainOf(err: unknown): unknown {
  if (err instanceof NotASwarmError) return new DomainError('conflict', 'not_a_swarm', err.message);
  if (err instanceof NoSuchNodeError) return notFound('node');
  if (err instanceof Error && /update out of sequence/i.test(err.message)) return conflict('the node changed meanwhile; try again');
  return err;
}
