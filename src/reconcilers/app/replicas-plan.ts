// Pure decisions of scaling (issue 19): an app runs `replicas` copies of its live version. Slot 0 is the
// live container of app_status (deployed, watched and healed as before, plan.ts); slots 1..replicas-1 are
// app_instances rows, added, healed and removed here, each on its own, without any switch. A replica joins
// the DNS answer only once its health check passed, and leaves it before it is stopped.
import { drainMinWaitMs, HEAL_RESET_AFTER_MS, type ObservedContainer } from './plan.js';

export interface InstanceFacts {
  slot: number;
  deployId: number;
  containerName: string;
  /** Null: not in the DNS answer (starting, or leaving). */
  address: string | null;
  healFailures: number;
  healNotBeforeMs: number | null;
  updatedAtMs: number;
}

export type ReplicaAction =
  /** No row, or a row of another version: make the container of the live deploy for this slot. */
  | { kind: 'create'; slot: number; replace?: string }
  /** Running, not yet in the answer: probe it (joins on success, replaced when it never passes). */
  | { kind: 'probe'; slot: number; startedAtMs: number }
  /** Stopped on its own or killed: restart with backoff (the event says OOMKilled when it was). */
  | { kind: 'restart'; slot: number; oomKilled: boolean; oomLikely?: boolean; exitCode?: number }
  | { kind: 'wait'; slot: number; afterMs: number }
  /** Up long enough: its failure count resets. */
  | { kind: 'reset'; slot: number }
  /** Beyond `replicas`: leave the answer first... */
  | { kind: 'unpublish'; slot: number }
  /** ...then, once the proxy cannot pick it any more, stop and remove it and forget the row. */
  | { kind: 'remove'; slot: number; container: string | null };

/**
 * What to do for every slot beyond the first, given the app's wanted replicas and live deploy. Slots
 * that need nothing are left out, so a steady app gets [] (rule 2). `liveDeployId` null (nothing live
 * yet, or stopped at 0 replicas) removes every extra slot.
 */
export function planReplicas(input: {
  replicas: number;
  liveDeployId: number | null;
  instances: InstanceFacts[];
  /** Observed containers of the app, by name. */
  containers: ObservedContainer[];
  nowMs: number;
  dnsRefreshMs: number;
  healthTimeoutMs: number;
}): ReplicaAction[] {
  const { instances, nowMs } = input;
  const byName = new Map(input.containers.map((c) => [c.name, c]));
  const wanted = input.liveDeployId === null ? 0 : input.replicas;
  const out: ReplicaAction[] = [];
  for (const row of instances) {
    if (row.slot < wanted) continue;
    const c = byName.get(row.containerName);
    if (row.address !== null && c?.running) out.push({ kind: 'unpublish', slot: row.slot });
    else if (nowMs - row.updatedAtMs >= drainMinWaitMs(input.dnsRefreshMs) || !c?.running) out.push({ kind: 'remove', slot: row.slot, container: c ? row.containerName : null });
    else out.push({ kind: 'wait', slot: row.slot, afterMs: drainMinWaitMs(input.dnsRefreshMs) - (nowMs - row.updatedAtMs) });
  }
  for (let slot = 1; slot < wanted; slot++) {
    const row = instances.find((r) => r.slot === slot);
    if (!row) {
      out.push({ kind: 'create', slot });
      continue;
    }
    const c = byName.get(row.containerName);
    const backoffMs = row.healNotBeforeMs !== null && row.healNotBeforeMs > nowMs ? row.healNotBeforeMs - nowMs : 0;
    if (row.deployId !== input.liveDeployId || !c || c.removing) {
      // Gone or another version: recreated at once, unless its last attempt failed (backoff).
      if (backoffMs > 0 && row.deployId === input.liveDeployId) out.push({ kind: 'wait', slot, afterMs: backoffMs });
      else out.push({ kind: 'create', slot, replace: row.containerName });
      continue;
    }
    if (c.dying) {
      // Being stopped from outside: out of the answer now; its `die` event brings the restart.
      if (row.address !== null) out.push({ kind: 'unpublish', slot });
      continue;
    }
    if (!c.running) {
      if (backoffMs > 0) out.push({ kind: 'wait', slot, afterMs: backoffMs });
      else out.push({ kind: 'restart', slot, oomKilled: c.oomKilled === true, ...(c.oomLikely ? { oomLikely: true } : {}), exitCode: c.exitCode });
      continue;
    }
    const upMs = nowMs - (c.startedAtMs ?? nowMs);
    if (row.address === null) out.push({ kind: 'probe', slot, startedAtMs: c.startedAtMs ?? nowMs });
    else if (row.healFailures > 0 && upMs >= HEAL_RESET_AFTER_MS) out.push({ kind: 'reset', slot });
    else if (row.healFailures > 0) out.push({ kind: 'wait', slot, afterMs: HEAL_RESET_AFTER_MS - upMs });
  }
  return out;
}

