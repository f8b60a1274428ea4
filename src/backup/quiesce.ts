// A gate in front of the other reconcilers, so a restore swaps the database and the service data while
// nothing else reads or acts on them: `pause()` makes new reconciles requeue themselves and waits for
// the ones in flight; `resume()` opens the gate (the restore then enqueues everything). The backup
// reconciler itself is not gated: the restore runs inside it.
import type { Reconciler } from '../controller/types.js';

/** How soon a reconcile turned away by a paused gate is tried again. */
export const GATED_RETRY_MS = 500;

export interface Gate {
  wrap(r: Reconciler): Reconciler;
  pause(): Promise<void>;
  resume(): void;
  paused(): boolean;
}

export function createGate(): Gate {
  let paused = false;
  let inflight = 0;
  const idle: (() => void)[] = [];
  return {
    wrap: (r) => ({
      kind: r.kind,
      listNames: () => r.listNames(),
      async reconcile(name, ctx) {
        if (paused) return { requeueAfterMs: GATED_RETRY_MS };
        inflight++;
        try {
          return await r.reconcile(name, ctx);
        } finally {
          inflight--;
          if (inflight === 0) idle.splice(0).forEach((f) => f());
        }
      },
    }),
    async pause() {
      paused = true;
      if (inflight > 0) await new Promise<void>((resolve) => idle.push(resolve));
    },
    resume() {
      paused = false;
    },
    paused: () => paused,
  };
}

/** The manager as registerReconcilers sees it: every reconciler it registers goes behind the gate. */
export function gatedManager<M extends { register(r: Reconciler): void }>(manager: M, gate: Gate): M {
  return Object.assign(Object.create(manager) as M, { register: (r: Reconciler) => manager.register(gate.wrap(r)) });
}
