// The app reconciler: observes one app (its row, its open deploy, the containers labelled with it), asks
// plan.ts what to do next, does exactly that one thing, and says when to look again. Deploy steps live
// in pipeline.ts, healing in heal.ts; this file only observes, dispatches and keeps status true.
import { crashAlertOpen, recovered } from './notices.js';
import { crashAlertVerdict } from './crash-alert.js';
import type { ReconcileCtx, Reconciler, Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import { LABELS } from '../../runtime/runtime.js';
import { apps } from '../../store/schema/index.js';
import { shownAppType, type AppView } from '../../store/app-view.js';
import { observeApp, observeLive, readInstances } from '../../observed/apps.js';
import { scaleReplicas } from './scale.js';
import { addAppEvent } from '../../store/deploys.js';
import { activeDeploy, drainingDeploys, getDeploy, newestFinished, watchedDeploy } from '../../store/deploys.js';
import { drainStep } from './drain.js';
import { getApp, getAppByName } from '../../store/apps.js';
import { deriveAppStatus, deriveStatusReason, drainMinWaitMs, HEAL_RESET_AFTER_MS, orphans, planApp, type AppFacts, type DeployFacts, type DeployStep, type ObservedContainer, type WatchFacts } from './plan.js';
import { graceOf } from './container-spec.js';
import { parseServiceSpec } from '../../stacks/service-spec.js';
import { stoppedByEngineApi, type WatchStep } from './watch-plan.js';
import { beginFlipBack, endWatch, flipBackStep, giveUpFlipBack, watchProbe } from './watch.js';
import { runDeployStep, beginDeploy, newPipelineMemory, failDeploy } from './pipeline.js';
import { beginStep, newAttemptMemory } from './attempts.js';
import { heal } from './heal.js';
import { checkHealth } from './health-check.js';
import { emptyTrash } from '../../volumes/dirs.js';
import { builtImageRepository } from '../../codehost/repository.js';
import type { AppReconcilerDeps } from './deps.js';

export function createAppReconciler(deps: AppReconcilerDeps): Reconciler {
  const { db, runtime, settings } = deps;
  const memory = newPipelineMemory();
  /** Steps a pass runs on into (runOn): short, no wait of their own before they finish or requeue. */
  const RUN_ON_STEPS = new Set<DeployStep>(['validate', 'pull', 'create', 'health_check', 'route_update']);
  const attempts = newAttemptMemory();

  async function observe(name: string) {
    // The engine first: while it is down the pass fails here, before any row is read (with a thousand apps
    // retrying on a stopped engine, those reads were most of the daemon's work).
    const list = await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: settings.instance, [LABELS.app]: name }, settings.network);
    const view = getAppByName(db, name);
    // An adopted app is managed from its first deploy on; the spec keeps saying what the user asked.
    const row: AppView | undefined = view && { ...view, appType: shownAppType(view) };
    const containers: ObservedContainer[] = list.map((c) => ({
      name: c.name,
      running: c.running,
      deployId: c.labels[LABELS.deploy] ? Number(c.labels[LABELS.deploy]) : undefined,
      appId: c.labels[LABELS.appId] ? Number(c.labels[LABELS.appId]) : undefined,
      startedAtMs: c.startedAt ? Date.parse(c.startedAt) : undefined,
      exitCode: c.exitCode,
      removing: c.state === 'removing' || c.state === 'dead',
      oomKilled: c.oomKilled,
      oomLikely: c.oomLikely,
      dying: c.running && deps.kills?.dying(c.name, c.startedAt ? Date.parse(c.startedAt) : undefined),
      ...(c.state === 'created' ? { starting: true } : {}),
      ...(c.stoppedFromOutside ? { stoppedFromOutside: true } : {}),
    }));
    const deploy = row ? activeDeploy(db, row.id) : undefined;
    const watched = row ? watchedDeploy(db, row.id) : undefined;
    // Why the watched container stopped decides between a flip-back and a heal: ask the engine's event
    // history for a `kill` since it started (docker stop/kill/rm -f send one; an exit of its own does not).
    // Every replica of the watched version counts (issue 19): slot 0 and its `-r<slot>` siblings.
    const ofWatched = (n: string) => !!watched?.stagingContainer && (n === watched.stagingContainer || n.startsWith(`${watched.stagingContainer}-r`));
    // (A Swarm says so itself: a task its orchestrator shut down, stoppedFromOutside, needs no history.)
    const stoppedOnes = watched?.step === 'watch' ? list.filter((c) => ofWatched(c.name) && !c.running && c.state === 'exited' && !c.oomKilled && !c.stoppedFromOutside) : [];
    for (const stopped of stoppedOnes) {
      // From a second before its start: clocks round, and its own `start` marks where its run begins.
      const since = stopped.startedAt ? Date.parse(stopped.startedAt) - 1_000 : 0;
      containers.find((c) => c.name === stopped.name)!.stoppedFromOutside = stoppedByEngineApi(await runtime.pastActions(stopped.id, since));
    }
    return { row, containers, deploy, watched };
  }

  /** One pass: the app's one next action, then a poll of its old versions that still drain (drain.ts). */
  async function reconcile(name: string, ctx?: ReconcileCtx): Promise<Result> {
    const acted = await act(name, ctx);
    return soonest(acted, await drainStep(deps, memory.zeroPolls, name));
  }

  async function act(name: string, ctx?: ReconcileCtx): Promise<Result> {
    const { row, containers, deploy, watched } = await observe(name);
    const facts = { ...toFacts(row), runsOnce: row?.stackService ? parseServiceSpec(deps.sealer.open(row.stackService))?.service.runsOnce === true : false };
    const deployFacts: DeployFacts | undefined = deploy && {
      id: deploy.id,
      status: deploy.status as 'pending' | 'running',
      step: deploy.step as DeployStep | null,
      stagingContainer: deploy.stagingContainer,
      previousContainer: deploy.previousContainer,
    };

    const watchFacts: WatchFacts | undefined = watched && {
      id: watched.id,
      step: (watched.step ?? 'watch') as WatchStep,
      watchUntilMs: Date.parse(watched.watchUntil!),
      watched: watched.stagingContainer,
      kept: watched.previousContainer,
    };

    const replicaNames = row ? readInstances(db, row.id).map((r) => r.containerName) : [];
    const draining = row ? drainingDeploys(db, row.id).flatMap((d) => (d.previousContainer ? [d.previousContainer] : [])) : [];
    for (const orphan of orphans(facts, deployFacts, containers, watchFacts, replicaNames, draining)) {
      deps.log.info('removing orphan container', { app: name, container: orphan });
      await runtime.remove(orphan);
    }
    if (!row) {
      // A deleted app crashes no more: its open crash alert is answered (the id is on its containers' labels).
      for (const id of new Set(containers.map((c) => c.appId).filter((i): i is number => i !== undefined))) {
        if (getApp(db, id)) continue;
        if (crashAlertVerdict({ alertOpen: crashAlertOpen(db, id), deleted: true, replicas: 0, live: null }).kind === 'resolve') recovered(deps, id, { why: 'deleted', name }, deps.now());
      }
      // Volumes of a purged app (moved aside by the delete command) go once its containers are gone.
      if (await emptyTrash(settings.dataDir)) deps.log.info('purged volumes removed', { app: name });
      // A deleted app's built images go too (a closed preview leaves nothing behind, issue 20). Its
      // containers are gone by now, so the engine lets them go; an image still in use elsewhere stays.
      const removed: string[] = [];
      for (const tag of await runtime.listImageTags(builtImageRepository(name))) if (await runtime.removeImage(tag)) removed.push(tag);
      if (removed.length > 0) deps.log.info('removed the images built for a deleted app', { app: name, images: removed });
      await deps.dns.sync();
      deps.enqueue(keyOf('proxy', 'main'));
      return {};
    }

    const action = planApp(facts, deployFacts, containers, deps.now(), watchFacts);
    switch (action.kind) {
      case 'watch_probe': {
        const probed = await watchProbe(deps, memory.watchFailures, row, watched!);
        if (probed.requeueAfterMs === 0) return probed; // flipping back
        const rest = await steady(row, containers);
        return { requeueAfterMs: Math.min(probed.requeueAfterMs ?? Infinity, rest.requeueAfterMs ?? Infinity) };
      }
      case 'flip_back_begin':
        return beginFlipBack(deps, memory.watchFailures, row, watched!, action.reason, containers.find((c) => c.name === watched!.previousContainer));
      case 'flip_back_step': {
        const giveUp = beginStep(db, attempts, watched!, action.step);
        if (giveUp) return giveUpFlipBack(deps, watched!, action.step, giveUp);
        return flipBackStep(deps, row, watched!, action.step);
      }
      case 'end_watch':
        return endWatch(deps, memory.watchFailures, row, watched!, action.why);
      case 'begin_deploy':
        beginDeploy(deps, row, action.deployId);
        return watched ? { requeueAfterMs: 0 } : runOn(row, action.deployId, { requeueAfterMs: 0 }, ctx);
      case 'deploy_step': {
        const giveUp = beginStep(db, attempts, deploy!, action.step);
        if (giveUp) return failDeploy(deps, deploy!, action.step, 'failed', giveUp);
        const done = await runDeployStep(deps, memory, row, deploy!, action.step, ctx?.signal);
        return watched ? done : runOn(row, deploy!.id, done, ctx);
      }
      case 'heal': {
        const { liveRunning, ...healed } = await heal(deps, row, action);
        // The status as the heal left it, before the other replicas are made: on a Swarm each one's start
        // waits for its task (seconds), and `inactive` (from replicas 0) must not outlive the first replica.
        await writeStatus(row, liveRunning);
        return soonest(healed, await scaleReplicas(deps, row, containers, row.currentDeployId));
      }
      case 'heal_wait':
        await refreshStatus(row, containers);
        return soonest({ requeueAfterMs: action.afterMs }, await scaleReplicas(deps, row, containers, row.currentDeployId));
      case 'stop_live':
        return stopLive(row, containers, action.container, action.unpublish);
      case 'steady':
        return steady(row, containers);
    }
  }

  /**
   * The steps of a deploy that follow one another with no wait run on in the same pass (0045): each was
   * persisted with its event by the step before, counted by beginStep, and looks at the engine itself, so
   * a restart resumes at the step it reached; what the next pass's observation would add is nothing the
   * plan acts on while a deploy runs (it goes first, planApp). A wait, a build step, the drain or a watch
   * of the previous deploy ends the run on (their next look is the next pass).
   */
  async function runOn(row: AppView, deployId: number, result: Result, ctx?: ReconcileCtx): Promise<Result> {
    for (let n = 0; n < RUN_ON_STEPS.size && result.requeueAfterMs === 0 && !ctx?.signal?.aborted; n++) {
      const d = getDeploy(db, deployId);
      const step = d?.step as DeployStep | null | undefined;
      if (!d || d.status !== 'running' || !step || !RUN_ON_STEPS.has(step)) break;
      const giveUp = beginStep(db, attempts, d, step);
      if (giveUp) return failDeploy(deps, d, step, 'failed', giveUp);
      result = await runDeployStep(deps, memory, row, d, step, ctx?.signal);
    }
    return result;
  }

  /** Keeps the observed facts true when nothing is in progress: adopted address, status, heal reset. */
  async function steady(row: AppView, containers: ObservedContainer[]): Promise<Result> {
    if (row.appType === 'adopted_container' && row.currentDeployId === null && row.source) {
      const adopted = await runtime.inspect(row.source);
      const address = adopted?.running ? adopted.address ?? null : null;
      if (observeLive(db, row.id, { containerName: row.source, address })) await deps.dns.sync();
      await writeStatus(row, adopted?.running ?? false);
      deps.enqueue(keyOf('proxy', 'main'));
      return {};
    }
    const live = containers.find((c) => c.name === row.liveContainerName);
    let requeueAfterMs: number | undefined;
    if (live?.running && row.healFailures > 0) {
      const upMs = deps.now() - (live.startedAtMs ?? deps.now());
      if (upMs >= HEAL_RESET_AFTER_MS) observeApp(db, row.id, { healFailures: 0, healNotBefore: null });
      else requeueAfterMs = HEAL_RESET_AFTER_MS - upMs;
    }
    // The crash alert closes once the app serves again, whatever ended the loop (crash-alert.ts): the same
    // container stayed up, a deploy or rollback replaced it (its heal counter starts at 0), or scale to 0.
    const alertWait = answerCrashAlert(row, live);
    if (alertWait !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, alertWait);
    if (live?.dying) {
      // Being stopped from outside (kills.ts): beside other replicas it leaves the answer now, not at `die`.
      if (row.liveAddress !== null && readInstances(db, row.id).some((r) => r.address !== null)) {
        observeLive(db, row.id, { address: null });
        await deps.dns.sync();
        deps.enqueue(keyOf('proxy', 'main'));
      }
    } else if (live?.running && row.liveAddress === null && row.replicas > 1) {
      // Healed beside other replicas (heal.ts): it joins the answer after its own health check.
      const joined = await joinAfterProbe(row, live);
      if (joined !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, joined);
    } else if (live?.running) {
      // Drift: the engine may hand a restarted container a new address.
      const info = await runtime.inspect(live.name, settings.network);
      if (info?.address && observeLive(db, row.id, { address: info.address })) await deps.dns.sync();
    }
    // The status from what was observed, before the replicas' effects (each start on a Swarm takes seconds).
    await writeStatus(row, live?.running ?? false);
    const scaled = row.replicas > 0 ? await scaleReplicas(deps, row, containers, row.currentDeployId) : await scaleReplicas(deps, row, containers, null);
    if (scaled.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, scaled.requeueAfterMs);
    // No proxy pass from here: routes do not depend on a container's state (DNS answers do, synced above),
    // and the proxy reconciler checks Caddy every second anyway. Enqueueing it from every steady pass made
    // each app write cost a full read of every app and of Caddy's config.
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  }

  /**
   * Answers the app's open crash alert when crash-alert.ts says the loop is over (`live`: the live container as
   * observed, undefined when there is none). Returns when to look again, or undefined.
   */
  function answerCrashAlert(row: AppView, live: ObservedContainer | undefined): number | undefined {
    const upMs = live?.running ? deps.now() - (live.startedAtMs ?? deps.now()) : 0;
    const alert = crashAlertVerdict({ alertOpen: crashAlertOpen(db, row.id), deleted: false, replicas: row.replicas, live: live ? { running: live.running, upMs } : null });
    if (alert.kind === 'wait') return alert.afterMs;
    if (alert.kind === 'resolve') {
      recovered(deps, row.id, alert.why === 'serves' && live ? { why: 'serves', container: live.name, deployId: row.currentDeployId, upSeconds: Math.floor(upMs / 1000) } : { why: 'scaled_to_zero' }, deps.now());
    }
    return undefined;
  }

  /**
   * Probes the live container that is out of the answer; healthy: it joins (DNS synced). Returns when to
   * probe again, or undefined. Never healthy within the health timeout: stopped, so healing restarts it
   * with backoff (as a replica that never passes, scale.ts).
   */
  async function joinAfterProbe(row: AppView, live: ObservedContainer): Promise<number | undefined> {
    const { info, verdict } = await checkHealth(deps, { internalPort: row.livePort ?? row.internalPort, healthCheckPath: row.healthCheckPath }, live.name, live.startedAtMs ?? deps.now());
    if (verdict.kind === 'wait') return verdict.afterMs;
    if (verdict.kind === 'failed') {
      addAppEvent(db, row.id, 'heal', `live container ${live.name} did not become healthy after its restart: ${verdict.reason}; stopped`, 'error');
      await runtime.stop(live.name, graceOf(deps, row));
      return 0;
    }
    if (observeLive(db, row.id, { address: info!.address!, containerId: info!.id })) await deps.dns.sync();
    return undefined;
  }

  /** `replicas: 0`: out of the answer, then (the proxy re-resolved) stopped and removed; every replica goes. */
  async function stopLive(row: AppView, containers: ObservedContainer[], container: string, unpublish: boolean): Promise<Result> {
    const extras = await scaleReplicas(deps, row, containers, null);
    observeApp(db, row.id, { status: 'inactive', serving: false, statusReason: null });
    if (unpublish) {
      observeLive(db, row.id, { address: null });
      await deps.dns.sync();
      deps.enqueue(keyOf('proxy', 'main'));
      return soonest({ requeueAfterMs: drainMinWaitMs(settings.dnsRefreshMs) }, extras);
    }
    await runtime.stop(container, graceOf(deps, row));
    await runtime.remove(container);
    addAppEvent(db, row.id, 'scale', `scaled to 0 replicas: ${container} stopped and removed; the app is kept`);
    answerCrashAlert(row, undefined); // nothing of it runs now: a crash loop is over
    return extras;
  }

  async function refreshStatus(row: AppView, containers: ObservedContainer[]) {
    await writeStatus(row, containers.some((c) => c.name === row.liveContainerName && c.running));
  }

  async function writeStatus(row: AppView, liveRunning: boolean) {
    if (row.replicas === 0 && row.appType === 'managed') return void observeApp(db, row.id, { status: 'inactive', serving: false, statusReason: null });
    // Slot 0 healing (its backoff, or its node lost on a Swarm) while other replicas are in the answer: the
    // app still serves, so it stays active.
    const serving = liveRunning || (row.replicas > 1 && readInstances(db, row.id).some((r) => r.address !== null));
    const newest = newestFinished(db, row.id);
    const status = deriveAppStatus(serving, newest?.status);
    observeApp(db, row.id, { status, serving, statusReason: deriveStatusReason(status, newest) });
  }

  return {
    kind: 'app',
    reconcile,
    // Apps in the database, plus any app name on a container of ours: an app deleted while the daemon was
    // down still gets a pass, which removes its containers.
    async listNames() {
      const names = new Set(db.select({ name: apps.name }).from(apps).all().map((a) => a.name));
      const ours = await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: settings.instance, [LABELS.role]: 'app' });
      for (const c of ours) if (c.labels[LABELS.app]) names.add(c.labels[LABELS.app]);
      return [...names];
    },
  };
}

/** The sooner of two requeues (none: no requeue). */
function soonest(a: Result, b: Result): Result {
  const ms = Math.min(a.requeueAfterMs ?? Infinity, b.requeueAfterMs ?? Infinity);
  return ms === Infinity ? {} : { requeueAfterMs: ms };
}

function toFacts(row: AppView | undefined): AppFacts {
  return {
    id: row?.id ?? null,
    exists: row !== undefined,
    appType: row?.appType ?? 'managed',
    liveContainerName: row?.liveContainerName ?? null,
    currentDeployId: row?.currentDeployId ?? null,
    healFailures: row?.healFailures ?? 0,
    healNotBeforeMs: row?.healNotBefore ? Date.parse(row.healNotBefore) : null,
    replicas: row?.replicas ?? 1,
    liveAddress: row?.liveAddress ?? null,
  };
}
