// The node changes users asked for (node_specs) and what the node reconciler made of them
// (node_spec_status): the reads, and the one write of the spec, which only the node command calls.
import { eq, sql } from 'drizzle-orm';
import type { NodeChange } from '../runtime/runtime.js';
import type { Db } from './db.js';
import { nodeSpecs, nodeSpecStatus, nowIso, type NodeSpecRow, type NodeSpecStatusRow } from './schema/index.js';

/** Records `change` as the node's latest request (fields it does not give are cleared); its new generation. */
export function recordNodeChange(db: Db, nodeRef: string, change: NodeChange): number {
  const set = { availability: change.availability ?? null, labels: change.labels ?? null, updatedAt: nowIso() };
  return db
    .insert(nodeSpecs)
    .values({ nodeRef, ...set, generation: 1 })
    .onConflictDoUpdate({ target: nodeSpecs.nodeRef, set: { ...set, generation: sql`${nodeSpecs.generation} + 1` } })
    .returning({ generation: nodeSpecs.generation })
    .get().generation;
}

export const nodeSpecOf = (db: Db, nodeRef: string): NodeSpecRow | undefined => db.select().from(nodeSpecs).where(eq(nodeSpecs.nodeRef, nodeRef)).get();

export const nodeSpecStatusOf = (db: Db, nodeRef: string): NodeSpecStatusRow | undefined =>
  db.select().from(nodeSpecStatus).where(eq(nodeSpecStatus.nodeRef, nodeRef)).get();

/** The outcome of generation `generation` of the node's change, once the reconciler settled it (or a later one). */
export function nodeOutcome(db: Db, nodeRef: string, generation: number): NodeSpecStatusRow | undefined {
  const s = nodeSpecStatusOf(db, nodeRef);
  return s && s.generation >= generation ? s : undefined;
}

/** Nodes whose latest change is not settled yet: the node reconciler's names after a restart. */
export function unsettledNodeSpecs(db: Db): string[] {
  return db
    .select({ ref: nodeSpecs.nodeRef, want: nodeSpecs.generation, done: nodeSpecStatus.generation })
    .from(nodeSpecs)
    .leftJoin(nodeSpecStatus, eq(nodeSpecStatus.nodeRef, nodeSpecs.nodeRef))
    .all()
    .filter((r) => r.done === null || r.done < r.want)
    .map((r) => r.ref);
}
