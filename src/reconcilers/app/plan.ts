// Pure decisions of the app reconciler: given what the database wants and what the engine runs, what is
// the one next thing to do. The reconciler only observes, calls these, and acts (DESIGN.md rule 5).
import { planWatch, type WatchAction, type WatchStep } from './watch-plan.js';

export type DeployStep = 'validate' | 'clone' | 'build' | 'pull' | 'create' | 'health_check' | 'route_update' | 'stop_old' | 'finalize';

export interface ObservedContainer {
  name: string;
  running: boolean;
  deployId?: number;
  /** The app row id the container was made for (`svc.app-id`). */
  appId?: number;
  startedAtMs?: number;
  /** Exit code of a stopped container. */
  exitCode?: number;
  /** The engine is removing it (`docker rm -f`) or it is dead: it cannot be started, only recreated. */
  removing?: boolean;
  /** A stopped container the kernel killed for memory. */
  oomKilled?: boolean;
  /** Exit 137 under a memory limit where the engine cannot confirm OOMKilled (a Swarm task on a worker). */
  oomLikely?: boolean;
  /**
   * A stopped container that someone stopped through the engine's API (`docker stop`, `docker kill`,
   * `docker rm -f`: the engine recorded a `kill` for it since it started), or, on a Swarm, a task the
   * orchestrator shut down (a drain, a rebalance) or one on a node that is down (the runtime says so). The
   * event history is only looked up for the watched containers of a deploy (watch-plan.ts).
   */
  stoppedFromOutside?: boolean;
  /**
   * Created, not yet running (on a Swarm: a new task placed and starting): not an exit of anything. Only
   * set (true) for such a container.
   */
  starting?: boolean;
  /** Still running, but sent a stopping signal since it started (kills.ts): out of the answer at once. */
  dying?: boolean;
}

export interface AppFacts {
  /** The row id, null when the app does not exist (any more). */
  id: number | null;
  exists: boolean;
  appType: 'managed' | 'adopted_container' | 'external_service';
  liveContainerName: string | null;
  currentDeployId: number | null;
  healFailures: number;
  healNotBeforeMs: number | null;
  /** Wanted copies (issue 19); 0 stops the app without deleting it. */
  replicas: number;
  /** Slot 0's address in the DNS answer (null: out of it). */
  liveAddress: string | null;
  /** A one-shot stack service (service_completed_successfully): once it exited 0 it is done, never healed. */
  runsOnce?: boolean;
}

export interface DeployFacts {
  id: number;
  status: 'pending' | 'running';
  step: DeployStep | null;
  stagingContainer: string | null;
  previousContainer: string | null;
}

/** A successful deploy still inside its watch window (API.md "Watch after the switch"). */
export interface WatchFacts {
  id: number;
  /** 'watch' while probing, 'flip_back' while the kept container comes back, 'flip_stop' once switched back. */
  step: WatchStep;
  watchUntilMs: number;
  /** The new live container under watch. */
  watched: string | null;
  /** The old container, stopped but kept. */
  kept: string | null;
}

export type AppAction =
  | WatchAction
  | { kind: 'begin_deploy'; deployId: number }
  | { kind: 'deploy_step'; deployId: number; step: DeployStep }
  /**
   * `exists`: the live container can be started again; otherwise it is recreated, and `listed` says whether
   * the engine still listed it (being removed: its removal must end first) or it is gone (create at once).
   */
  | { kind: 'heal'; container: string; exists: boolean; listed?: boolean; oomKilled?: boolean; oomLikely?: boolean }
  /** `replicas: 0`: slot 0 leaves the DNS answer, then (after the proxy's refresh) is stopped and removed. */
  | { kind: 'stop_live'; container: string; unpublish: boolean }
  | { kind: 'heal_wait'; afterMs: number }
  | { kind: 'steady' };

/**
 * Name of the container of one deploy of one app (`svc-<app>-<deploy>` for the legacy instance); stable so a
 * resumed step finds what it created, prefixed by the instance so two data directories never collide.
 */
export const containerName = (instance: string, app: string, deployId: number) => `${instance}-${app}-${deployId}`;

/** Replica `slot` of a deploy: slot 0 keeps containerName (what app_status records), the others `-r<slot>`. */
export const replicaName = (instance: string, app: string, deployId: number, slot: number) =>
  slot === 0 ? containerName(instance, app, deployId) : `${containerName(instance, app, deployId)}-r${slot}`;

/**
 * The next action for an app. A deploy in progress always goes first (self-healing waits for it: the
 * pipeline decides what serves); otherwise a live container that is not running is healed: started again
 * with crash-loop backoff, or recreated at once when it is gone or being removed.
 */
export function planApp(
  app: AppFacts,
  deploy: DeployFacts | undefined,
  containers: ObservedContainer[],
  nowMs: number,
  watch?: WatchFacts,
): AppAction {
  const watching = watch && planWatch(app, watch, deploy, containers, nowMs);
  if (watching) return watching;
  if (deploy?.status === 'running') return { kind: 'deploy_step', deployId: deploy.id, step: deploy.step ?? 'validate' };
  if (deploy?.status === 'pending') return { kind: 'begin_deploy', deployId: deploy.id };
  if (app.appType !== 'managed' || !app.liveContainerName || app.currentDeployId === null) return { kind: 'steady' };
  const live = containers.find((c) => c.name === app.liveContainerName);
  if (app.replicas === 0) {
    if (app.liveAddress !== null) return { kind: 'stop_live', container: app.liveContainerName, unpublish: true };
    return live ? { kind: 'stop_live', container: app.liveContainerName, unpublish: false } : { kind: 'steady' };
  }
  if (live?.running) return { kind: 'steady' };
  if (app.runsOnce && live && !live.removing && live.exitCode === 0) return { kind: 'steady' };
  // Gone (or going) is not a crash loop: recreate at once, whatever the backoff says.
  if (!live || live.removing) return { kind: 'heal', container: app.liveContainerName, exists: false, listed: !!live };
  if (app.healNotBeforeMs !== null && app.healNotBeforeMs > nowMs) return { kind: 'heal_wait', afterMs: app.healNotBeforeMs - nowMs };
  return { kind: 'heal', container: app.liveContainerName, exists: true, oomKilled: live.oomKilled, oomLikely: live.oomLikely };
}

/**
 * Containers labelled for this app that nothing wants: not the live one, not the staging or the draining
 * old one of the deploy in progress. They are leftovers of crashes, failed deploys, a deleted app, or a
 * deleted app of the same name (another `svc.app-id`), whose containers a re-created app never adopts.
 */
export function orphans(app: AppFacts, deploy: DeployFacts | undefined, containers: ObservedContainer[], watch?: WatchFacts, replicas: string[] = [], draining: string[] = []): string[] {
  if (!app.exists) return containers.map((c) => c.name);
  const keep = new Set<string>([...replicas, ...draining]);
  if (app.liveContainerName) keep.add(app.liveContainerName);
  if (watch?.kept) keep.add(watch.kept);
  if (watch?.watched) keep.add(watch.watched);
  if (deploy?.status === 'running') {
    if (deploy.stagingContainer) keep.add(deploy.stagingContainer);
    if (deploy.previousContainer) keep.add(deploy.previousContainer);
  }
  // The old version's other replicas drain with its first one (pipeline.ts stopOld removes them).
  const oldReplica = (c: ObservedContainer) => deploy?.status === 'running' && !!deploy.previousContainer && c.name.startsWith(`${deploy.previousContainer}-r`);
  // A flip-back stops the failed version's other replicas with its first one (watch.ts stopFailed).
  const failedReplica = (c: ObservedContainer) => (watch?.step === 'flip_back' || watch?.step === 'flip_stop') && !!watch.watched && c.name.startsWith(`${watch.watched}-r`);
  // An old version draining after its switch keeps every replica until its drain ends (drain.ts).
  const drainingReplica = (c: ObservedContainer) => draining.some((d) => c.name.startsWith(`${d}-r`));
  const foreign = (c: ObservedContainer) => c.appId !== undefined && c.appId !== app.id;
  // A resumed `create` step may find its own container half-made; that step replaces it itself.
  const ownStaging = (c: ObservedContainer) => deploy?.status === 'running' && c.deployId === deploy.id;
  return containers.filter((c) => foreign(c) || (!keep.has(c.name) && !ownStaging(c) && !oldReplica(c) && !failedReplica(c) && !drainingReplica(c))).map((c) => c.name);
}

/** A container that stayed up this long is considered recovered: its failure count resets. */
export const HEAL_RESET_AFTER_MS = 10_000;

export type ProbeVerdict = { kind: 'healthy' } | { kind: 'failed'; reason: string } | { kind: 'wait'; afterMs: number };

/**
 * Health-check decision for a staging container: it passes when it answered 2xx/3xx (and its image's own
 * HEALTHCHECK, if any, says healthy); it fails at once when the container exited, or at the deadline.
 * Probes are fast at first (25 ms), because most apps are ready within a second.
 */
export function judgeProbe(input: {
  running: boolean;
  exitCode?: number;
  httpStatus?: number;
  dockerHealth: 'none' | 'starting' | 'healthy' | 'unhealthy';
  elapsedMs: number;
  timeoutMs: number;
  /** false: no HTTP check (a stack service without a route, or with a Compose healthcheck): the engine's decides. */
  http?: boolean;
}): ProbeVerdict {
  if (!input.running) return { kind: 'failed', reason: `container exited with code ${input.exitCode ?? 'unknown'} before it became healthy` };
  if (input.http === false && input.dockerHealth === 'unhealthy') return { kind: 'failed', reason: 'Docker health check is unhealthy' };
  const httpOk = input.http === false || (input.httpStatus !== undefined && input.httpStatus >= 200 && input.httpStatus < 400);
  if (httpOk && (input.dockerHealth === 'none' || input.dockerHealth === 'healthy')) return { kind: 'healthy' };
  if (input.elapsedMs >= input.timeoutMs) {
    const why =
      input.httpStatus === undefined
        ? 'no HTTP answer'
        : !httpOk
          ? `HTTP ${input.httpStatus}`
          : `Docker health check is ${input.dockerHealth}`;
    return { kind: 'failed', reason: `health check did not pass within ${Math.round(input.timeoutMs / 1000)} s (${why})` };
  }
  const afterMs = input.elapsedMs < 2_000 ? 25 : input.elapsedMs < 10_000 ? 100 : 250;
  return { kind: 'wait', afterMs: Math.min(afterMs, input.timeoutMs - input.elapsedMs) };
}

export type DrainVerdict = { kind: 'stop' } | { kind: 'wait'; afterMs: number };

/**
 * Earliest SIGTERM after the cut: the proxy has re-resolved the route, plus 50 ms for its lookup in
 * flight at the cut (an answer counts as fresh from when it arrived). Requests that picked the old
 * address before are in flight and the drain's polls see them.
 */
export const drainMinWaitMs = (dnsRefreshMs: number) => dnsRefreshMs + 50;

/** Drain polls are 50 ms apart for this long after the cut (short requests end), then a second apart. */
export const DRAIN_FAST_POLLS_MS = 2_000;

/**
 * When the old container may get SIGTERM (notes/zero-downtime-switch.md rule 2, issue 37): not before the
 * proxy can no longer send it new requests (drainMinWaitMs), then once it has had no connection open (a
 * request in flight, an upgraded WebSocket, a stream: the proxy counts each until it ends) for 3 polls in
 * a row, or when the app's drain_seconds (`capMs`) passed regardless.
 */
export function judgeDrain(input: { sinceCutMs: number; dnsRefreshMs: number; capMs: number; inFlight: number; zeroPolls: number }): DrainVerdict {
  const minWaitMs = drainMinWaitMs(input.dnsRefreshMs);
  // Never before the proxy re-resolved, even with drain_seconds 0: a request picked the old address until then.
  if (input.sinceCutMs < minWaitMs) return { kind: 'wait', afterMs: minWaitMs - input.sinceCutMs };
  if (input.sinceCutMs >= input.capMs) return { kind: 'stop' };
  if (input.inFlight === 0 && input.zeroPolls >= 2) return { kind: 'stop' };
  const pollMs = input.inFlight > 0 && input.sinceCutMs >= DRAIN_FAST_POLLS_MS ? 1_000 : 50;
  return { kind: 'wait', afterMs: Math.min(pollMs, input.capMs - input.sinceCutMs) };
}

/** App status rules of API.md: active with a live container, error when the newest finished deploy failed. */
export function deriveAppStatus(liveRunning: boolean, newestFinished: string | undefined): 'active' | 'inactive' | 'error' {
  if (newestFinished === 'failed') return 'error';
  if (liveRunning) return 'active';
  if (newestFinished === 'auto_rollback') return 'error';
  return 'inactive';
}

/** Why an app is `error` (API `status_reason`): the newest finished deploy's error; null for any other status. */
export function deriveStatusReason(status: 'active' | 'inactive' | 'error', newest: { status: string; error: string | null } | undefined): string | null {
  if (status !== 'error' || !newest) return null;
  return newest.error ?? (newest.status === 'auto_rollback' ? 'the deploy was rolled back automatically' : 'the last deploy failed');
}

export interface EnvDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

/** Keys added, removed and changed between two env snapshots (values never leave this function). */
export function envDiff(previous: Record<string, string> | undefined, next: Record<string, string>): EnvDiff {
  const prev = previous ?? {};
  const added = Object.keys(next).filter((k) => !(k in prev)).sort();
  const removed = Object.keys(prev).filter((k) => !(k in next)).sort();
  const changed = Object.keys(next).filter((k) => k in prev && prev[k] !== next[k]).sort();
  return { added, removed, changed };
}
