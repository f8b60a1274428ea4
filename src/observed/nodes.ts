// The one writer of what the node reconciler made of a node change (node_spec_status): the generation it
// settled and, when Swarm refused it, the code and the reason. Commands write node_specs and never this.
import type { Db } from '../store/db.js';
import { nodeSpecs, nodeSpecStatus, nowIso } from '../store/schema/index.js';
import { eq } from 'drizzle-orm';

/** Records the outcome of `generation` (code and error null: applied); a node whose spec is gone is skipped. */
export function observeNodeOutcome(db: Db, nodeRef: string, generation: number, refusal: { code: string; error: string } | null): void {
  if (!db.select({ ref: nodeSpecs.nodeRef }).from(nodeSpecs).where(eq(nodeSpecs.nodeRef, nodeRef)).get()) return;
  const set = { generation, code: refusal?.code ?? null, error: refusal?.error ?? null, updatedAt: nowIso() };
  db.insert(nodeSpecStatus).values({ nodeRef, ...set }).onConflictDoUpdate({ target: nodeSpecStatus.nodeRef, set }).run();
}
