// Pure decisions of the watch after the switch (API.md "Watch after the switch (flip-back)"): while a
// successful deploy's window is open, its new live container is probed every second and the old one is
// kept stopped; an exit of its own (or OOMKilled) or 3 failed probes in a row flip back. A container
// removed or stopped through the engine's API by someone else, or on a Swarm a task shut down by the
// orchestrator (a drain) or lost with its node, says nothing about its version: it is healed. The effects live in watch.ts.
import { exitWhy } from './exit-why.js';
import type { AppFacts, DeployFacts, ObservedContainer } from './plan.js';
import type { WatchFacts } from './plan.js';

export type WatchStep = 'watch' | 'flip_back' | 'flip_stop';

export type WatchAction =
  /** Probe the watched container (it runs and the window is open). */
  | { kind: 'watch_probe'; deployId: number }
  /** The watched container exited: start the kept one and flip back (self-healing waits for this). */
  | { kind: 'flip_back_begin'; deployId: number; reason: string }
  /** A flip-back in progress: bring the kept container up, switch back, remove the failed one. */
  | { kind: 'flip_back_step'; deployId: number; step: 'flip_back' | 'flip_stop' }
  /** The window is over (time, a newer deploy, or nothing left to watch): remove the kept container. */
  | { kind: 'end_watch'; deployId: number; why: string };

/** Consecutive failed probes of the watched container that flip back. */
export const WATCH_FAILURES_TO_FLIP = 3;
/** Probe interval of the watched container. */
export const WATCH_PROBE_MS = 1_000;

/**
 * What the watch needs next, or undefined when it does not decide this pass. A flip-back under way always
 * finishes first (even past the window, even with a newer deploy queued: it owns the route); a newer
 * deploy, rollback or the end of the window closes a quiet watch before anything else happens.
 */
export function planWatch(
  app: AppFacts,
  watch: WatchFacts,
  deploy: DeployFacts | undefined,
  containers: ObservedContainer[],
  nowMs: number,
): WatchAction | undefined {
  if (watch.step === 'flip_back' || watch.step === 'flip_stop') return { kind: 'flip_back_step', deployId: watch.id, step: watch.step };
  if (deploy) return { kind: 'end_watch', deployId: watch.id, why: `deploy ${deploy.id} supersedes it` };
  if (!watch.watched || !watch.kept || app.liveContainerName !== watch.watched) {
    return { kind: 'end_watch', deployId: watch.id, why: 'the watched container is no longer live' };
  }
  if (nowMs >= watch.watchUntilMs) return { kind: 'end_watch', deployId: watch.id, why: 'the window is over' };
  const live = containers.find((c) => c.name === watch.watched);
  // Any other replica of the watched version that exited on its own flips the whole app back too.
  const failedReplica = containers.find((c) => c.name.startsWith(`${watch.watched}-r`) && ownExit(c));
  if (live?.running && failedReplica) return { kind: 'flip_back_begin', deployId: watch.id, reason: exitReason(failedReplica) };
  if (live?.running) return { kind: 'watch_probe', deployId: watch.id };
  // Removed, starting, or stopped by someone else (the engine's API, a Swarm drain): nothing says the version failed, so
  // self-healing brings it back as it would outside the window (and the window goes on).
  if (!live || live.removing) return undefined;
  if (!ownExit(live)) return undefined;
  return { kind: 'flip_back_begin', deployId: watch.id, reason: exitReason(live) };
}

/**
 * Stopped by itself (or for memory): not removed, not starting, not stopped through the engine's API by
 * someone, and on a Swarm not a task its orchestrator shut down (a drain: the operator's own action) or one
 * on a lost node.
 */
const ownExit = (c: ObservedContainer) => !c.running && !c.removing && !c.starting && (c.oomKilled === true || !c.stoppedFromOutside);

const exitReason = (c: ObservedContainer) => `${c.name} ${exitWhy(c)}`;

/**
 * Whether a stopped container was stopped through the engine's API (`docker stop`, `docker kill`,
 * `docker rm -f` all make the engine record `kill` before the `die`) in its latest run, from the engine's
 * actions for it, oldest first. An exit of its own records only `die` (and `oom` before it when the kernel
 * killed it). Actions before its latest `start` belong to an earlier run (a kill that a heal answered).
 */
export function stoppedByEngineApi(actions: string[]): boolean {
  return actions.slice(actions.lastIndexOf('start') + 1).includes('kill');
}

export type WatchProbeVerdict = { kind: 'ok' | 'wait'; afterMs: number } | { kind: 'flip_back'; reason: string };

/**
 * One probe of the watched container: a 2xx/3xx resets the count; the third failure in a row flips back.
 * The next probe comes a second later, or at the window's end, whichever is first.
 */
export function judgeWatchProbe(input: { httpStatus: number | undefined; failuresBefore: number; nowMs: number; watchUntilMs: number }): WatchProbeVerdict {
  const afterMs = Math.max(0, Math.min(WATCH_PROBE_MS, input.watchUntilMs - input.nowMs));
  const ok = input.httpStatus !== undefined && input.httpStatus >= 200 && input.httpStatus < 400;
  if (ok) return { kind: 'ok', afterMs };
  const failures = input.failuresBefore + 1;
  if (failures >= WATCH_FAILURES_TO_FLIP) {
    const last = input.httpStatus === undefined ? 'no HTTP answer' : `HTTP ${input.httpStatus}`;
    return { kind: 'flip_back', reason: `${failures} health probes in a row failed (last: ${last})` };
  }
  return { kind: 'wait', afterMs };
}

/**
 * A deploy with a previous container of ours is watched; a first deploy (or one replacing an adopted
 * container) is not, and neither is a rollback: its user rejected the version it replaces, which must
 * never come back by itself (API.md "Watch after the switch").
 */
export function watchesOld(input: { watchMs: number; previousContainer: string | null; previousDeployId: number | null; trigger: string }): boolean {
  return input.watchMs > 0 && input.previousContainer !== null && input.previousDeployId !== null && input.trigger !== 'rollback';
}
