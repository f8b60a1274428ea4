// The watch after the switch, acted out (decisions in watch-plan.ts): probe the new live container every
// second while the old one stays stopped but kept; on an exit or 3 failed probes flip back (start the kept
// container, probe it healthy, switch the route back, stop and remove the failed one), ending the deploy
// `auto_rollback`. Every wait is a requeue and every state is on the deploy row (`step`, `watch_until`,
// `deadline`), so a restarted daemon picks the watch up where it was.
import { flippedBack } from './notices.js';
import type { Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import { LABELS } from '../../runtime/runtime.js';
import { getApp } from '../../store/apps.js';
import { addAppEvent, addDeployEvent, getDeploy, updateDeploy } from '../../store/deploys.js';
import { nowIso, type DeployRow, type EventLevel } from '../../store/schema/index.js';
import { servingPort, shownImageRef, type AppView } from '../../store/app-view.js';
import { dropInstances, observeLive } from '../../observed/apps.js';
import type { AppReconcilerDeps } from './deps.js';
import { drainMinWaitMs } from './plan.js';
import { graceOf } from './container-spec.js';
import { checkHealth } from './health-check.js';
import { judgeWatchProbe } from './watch-plan.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Consecutive failed probes per watched deploy; lost on restart, which only restarts the count. */
export type WatchMemory = Map<number, number>;

/** One probe of the watched container; flips back on the third failure in a row or when it exited. */
export async function watchProbe(deps: AppReconcilerDeps, failures: WatchMemory, app: AppView, d: DeployRow): Promise<Result> {
  const info = await deps.runtime.inspect(d.stagingContainer!, deps.settings.network);
  // Stopped since the pass looked: the plan tells an exit of its own from a stop by someone else.
  if (!info?.running) return { requeueAfterMs: 0 };
  const httpStatus = info.address ? await deps.probe(`http://${info.address}:${servingPort(app)}${app.healthCheckPath}`, 1_000) : undefined;
  const verdict = judgeWatchProbe({ httpStatus, failuresBefore: failures.get(d.id) ?? 0, nowMs: deps.now(), watchUntilMs: Date.parse(d.watchUntil!) });
  if (verdict.kind === 'flip_back') return beginFlipBack(deps, failures, app, d, `${d.stagingContainer} failed: ${verdict.reason}`);
  failures.set(d.id, verdict.kind === 'ok' ? 0 : (failures.get(d.id) ?? 0) + 1);
  return { requeueAfterMs: verdict.afterMs };
}

/**
 * Starts the kept container and records the flip-back (its reason becomes the deploy's error), then probes
 * it in the same pass: every engine round trip saved here is time the app is down. `observed` is the kept
 * container as this pass already saw it (looked up when not given).
 */
export async function beginFlipBack(
  deps: AppReconcilerDeps,
  failures: WatchMemory,
  app: AppView,
  d: DeployRow,
  reason: string,
  observed?: { running: boolean },
): Promise<Result> {
  failures.delete(d.id);
  const kept = d.previousContainer!;
  const keptState = observed ?? (await deps.runtime.inspect(kept));
  if (!keptState) return abandon(deps, d, `${reason}, but the kept container ${kept} is gone; self-healing takes over`);
  if (!keptState.running) {
    try {
      await deps.runtime.start(kept);
    } catch (err) {
      if (!(await deps.runtime.ping())) throw err; // engine down: retried with backoff
      return abandon(deps, d, `${reason}, but the kept container ${kept} did not start (${err instanceof Error ? err.message : String(err)}); self-healing takes over`);
    }
  }
  event(deps, d, 'watch', `${reason} during the watch window; flipping back to ${kept}`, 'warn');
  const deadline = iso(deps.now() + deps.settings.healthTimeoutMs);
  updateDeploy(deps.db, deps.bus, d.id, { step: 'flip_back', error: reason, deadline });
  deps.log.warn('flipping back', { app: app.name, from: d.stagingContainer, to: kept, reason });
  return probeKept(deps, app, { ...d, step: 'flip_back', error: reason, deadline });
}

/** Advances a flip-back under way: the kept container's health check, then the stop of the failed one. */
export async function flipBackStep(deps: AppReconcilerDeps, app: AppView, d: DeployRow, step: 'flip_back' | 'flip_stop'): Promise<Result> {
  return step === 'flip_back' ? probeKept(deps, app, d) : stopFailed(deps, app, d);
}

async function probeKept(deps: AppReconcilerDeps, app: AppView, d: DeployRow): Promise<Result> {
  const kept = d.previousContainer!;
  const started = Date.parse(d.deadline!) - deps.settings.healthTimeoutMs;
  const keptDeploy = keptDeployOf(deps, kept);
  // The kept container listens where its own deploy's container did: a build's port, else the spec's.
  const port = keptDeploy?.buildPort ?? app.internalPort;
  const { info, verdict } = await checkHealth(deps, { ...app, internalPort: port }, kept, started);
  if (verdict.kind === 'wait') return { requeueAfterMs: verdict.afterMs };
  if (verdict.kind === 'failed') return abandon(deps, d, `flip-back to ${kept} failed: ${verdict.reason}; self-healing takes over`);

  // The switch back: the kept container is live again, with its own deploy's image.
  const previous = getDeploy(deps.db, Number(info!.labels[LABELS.deploy]));
  // In the same write, the failed version's other replicas leave the answer (scaling adds the kept
  // version's again once it serves).
  const hadReplicas = deps.db.transaction(() => {
    observeLive(
      deps.db,
      app.id,
      { containerName: kept, containerId: info!.id, address: info!.address! },
      {
        liveDeployId: previous?.id ?? app.currentDeployId,
        liveImage: previous?.imageRef ?? app.liveImage,
        imageBasis: app.imageRef,
        port,
        portBasis: app.internalPort,
        healFailures: 0,
        healNotBefore: null,
      },
    );
    return dropInstances(deps.db, app.id, 1);
  });
  await deps.dns.sync();
  deps.bus.emit('live', app.id);
  deps.enqueue(keyOf('proxy', 'main'));
  event(deps, d, 'route_update', `traffic for ${app.name} goes back to ${kept}`);
  addAppEvent(deps.db, app.id, 'flip_back', `flipped back from ${d.stagingContainer} to ${kept}: ${d.error}`, 'warn');
  flippedBack(deps, d, d.stagingContainer!, kept, d.error);
  const failed = await deps.runtime.inspect(d.stagingContainer!);
  const waitMs = failed?.running || hadReplicas ? drainMinWaitMs(deps.settings.dnsRefreshMs) : 0;
  updateDeploy(deps.db, deps.bus, d.id, { step: 'flip_stop', deadline: iso(deps.now() + waitMs) });
  return { requeueAfterMs: waitMs };
}

/** Once the proxy no longer sends the failed container anything: stop and remove it, end the deploy. */
async function stopFailed(deps: AppReconcilerDeps, app: AppView, d: DeployRow): Promise<Result> {
  const waitMs = Date.parse(d.deadline!) - deps.now();
  if (waitMs > 0) return { requeueAfterMs: waitMs };
  const failed = d.stagingContainer!;
  const ours = { [LABELS.managed]: 'true', [LABELS.instance]: deps.settings.instance, [LABELS.app]: app.name };
  for (const c of await deps.runtime.list(ours)) {
    if (!c.name.startsWith(`${failed}-r`)) continue;
    await deps.runtime.stop(c.name, graceOf(deps, app));
    await deps.runtime.remove(c.name);
  }
  await deps.runtime.stop(failed, graceOf(deps, app));
  await deps.runtime.remove(failed);
  event(deps, d, 'stop_old', `failed container ${failed} stopped and removed`);
  const now = getApp(deps.db, app.id);
  updateDeploy(deps.db, deps.bus, d.id, { status: 'auto_rollback', step: null, deadline: null, watchUntil: null, completedAt: nowIso() });
  event(deps, d, 'finalize', `deploy ${d.id} of ${app.name} rolled back automatically; ${(now && shownImageRef(now)) ?? 'the previous image'} serves again`, 'error');
  return { requeueAfterMs: 0 };
}

/**
 * A flip-back step that MAX_STEP_STARTS daemons began and none finished (attempts.ts): end it instead of
 * resuming it in the next daemon too. Before the switch back the watched container stays live (as when
 * there is nothing to flip to); after it the kept one already serves, and the deploy ends rolled back with
 * the failed container left to the orphan sweep.
 */
export async function giveUpFlipBack(deps: AppReconcilerDeps, d: DeployRow, step: 'flip_back' | 'flip_stop', reason: string): Promise<Result> {
  if (step === 'flip_back') return abandon(deps, d, `${reason}; ${d.stagingContainer} stays live and self-healing takes over`);
  event(deps, d, 'stop_old', `${reason}; the failed container ${d.stagingContainer} is left to the orphan sweep`, 'error');
  updateDeploy(deps.db, deps.bus, d.id, { status: 'auto_rollback', step: null, deadline: null, watchUntil: null, completedAt: nowIso() });
  return { requeueAfterMs: 0 };
}

/** Closes the window with nothing to flip to: the watched container stays live and self-healing applies. */
async function abandon(deps: AppReconcilerDeps, d: DeployRow, message: string): Promise<Result> {
  event(deps, d, 'watch', message, 'error');
  // Still draining: the drain stops and removes it when its connections end (drain.ts).
  if (d.previousContainer && d.drainUntil === null) await deps.runtime.remove(d.previousContainer);
  updateDeploy(deps.db, deps.bus, d.id, { step: null, deadline: null, watchUntil: null, error: null });
  return { requeueAfterMs: 0 };
}

/** Closes a quiet window (time, a newer deploy, a rollback): the kept container is removed (once drained). */
export async function endWatch(deps: AppReconcilerDeps, failures: WatchMemory, app: AppView, d: DeployRow, why: string): Promise<Result> {
  failures.delete(d.id);
  // Still draining: the drain stops and removes it when its connections end (drain.ts).
  if (d.previousContainer && d.drainUntil === null) await deps.runtime.remove(d.previousContainer);
  updateDeploy(deps.db, deps.bus, d.id, { step: null, watchUntil: null });
  deps.log.info('watch window closed', { app: app.name, deploy: d.id, removed: d.previousContainer, why });
  return { requeueAfterMs: 0 };
}

/** The deploy a kept container was made by: its name ends with the deploy id (plan.ts containerName). */
function keptDeployOf(deps: AppReconcilerDeps, kept: string) {
  const id = Number(kept.slice(kept.lastIndexOf('-') + 1));
  return Number.isInteger(id) ? getDeploy(deps.db, id) : undefined;
}

function event(deps: AppReconcilerDeps, d: Pick<DeployRow, 'id'>, step: string, message: string, level: EventLevel = 'info') {
  addDeployEvent(deps.db, deps.bus, d.id, step, message, level);
}
