// The blue/green deploy pipeline, one persisted step per reconcile pass (DESIGN.md "Core contracts"):
// validate -> pull -> create (staging) -> health_check -> route_update -> stop_old -> finalize.
// Every step is safe to run again after a crash: it checks what exists before it creates anything.
import { deployEnded } from './notices.js';
import { TerminalError, type Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import { addDeployEvent, getDeploy, lastSuccessful, updateDeploy } from '../../store/deploys.js';
import { nowIso, type DeployRow, type EventLevel } from '../../store/schema/index.js';
import type { AppView } from '../../store/app-view.js';
import { dropInstances, observeApp, observeInstance, observeLive } from '../../observed/apps.js';
import type { AppReconcilerDeps } from './deps.js';
import { mustPull } from './images.js';
import { isImageRef } from '../../runtime/references.js';
import { LABELS, RemovalInProgressError, REMOVAL_RETRY_MS } from '../../runtime/runtime.js';
import { appContainerSpec, ensureAppVolumes, graceOf, SLOT_LABEL, stackSpecOf } from './container-spec.js';
import { containerName, envDiff, type DeployStep } from './plan.js';
import { startDrain, type DrainMemory } from './drain.js';
import { checkHealth } from './health-check.js';
import { redact } from '../restart.js';
import { collectOutput } from '../../jobs/output.js';
import { probesHttp } from '../../stacks/service-spec.js';
import { watchesOld } from './watch-plan.js';
import { buildStep, buildsFromSource, cloneStep, type StepReport } from '../../build/steps.js';
import type { WatchMemory } from './watch.js';

const iso = (ms: number) => new Date(ms).toISOString();
/** Per-reconciler memory of the pipeline; lost on restart, which only means the drain polls again. */
export interface PipelineMemory {
  /** Consecutive polls that saw nothing open on a draining old version (drain.ts). */
  zeroPolls: DrainMemory;
  /** Consecutive failed probes of a watched deploy's container (watch.ts). */
  watchFailures: WatchMemory;
}
export const newPipelineMemory = (): PipelineMemory => ({ zeroPolls: new Map(), watchFailures: new Map() });

export function beginDeploy(deps: AppReconcilerDeps, app: AppView, deployId: number) {
  updateDeploy(deps.db, deps.bus, deployId, { status: 'running', step: 'validate', startedAt: nowIso() });
  const image = getDeploy(deps.db, deployId)?.imageRef;
  event(deps, { id: deployId }, 'start', `deploying ${app.name} with image ${image ?? '(none)'}`);
  deps.enqueue(keyOf('proxy', 'main'));
}

export async function runDeployStep(deps: AppReconcilerDeps, memory: PipelineMemory, app: AppView, deploy: DeployRow, step: DeployStep, signal?: AbortSignal): Promise<Result> {
  const secrets = () => deps.env.resolve(app.id).secrets;
  const specPort = app.internalPort;
  // A built image serves on its provider's port from its staging container on (the provider wrote the
  // Dockerfile, so nothing else listens); it becomes the observed port at the switch. The spec's
  // internal_port is never written: a manifest that leaves it out sees no difference.
  if (deploy.buildPort) app = { ...app, internalPort: deploy.buildPort };
  const report: StepReport = { event: (s, m, l) => event(deps, deploy, s, m, l), fail: (s, m) => fail(deps, deploy, s, 'failed', m) };
  try {
    switch (step) {
      case 'validate':
        return validate(deps, app, deploy);
      case 'clone':
        return await cloneStep(deps, deps.build!, app, deploy, report, signal);
      case 'build':
        return await buildStep(deps, deps.build!, app, deploy, report, signal);
      case 'pull':
        return await pull(deps, deploy, secrets);
      case 'create':
        return await create(deps, app, deploy);
      case 'health_check':
        return await healthCheck(deps, app, deploy);
      case 'route_update':
        return await routeUpdate(deps, app, deploy, specPort);
      case 'stop_old':
        return await stopOld(deps, app, deploy);
      case 'finalize':
        return finalize(deps, app, deploy);
    }
  } catch (err) {
    // A stopping daemon leaves the step as it is (it runs again at the next start); an engine that is
    // down is retried with backoff; anything else ends the deploy as failed.
    if (signal?.aborted) throw err;
    if (err instanceof RemovalInProgressError) return { requeueAfterMs: REMOVAL_RETRY_MS };
    if (!(err instanceof TerminalError) && !(await deps.runtime.ping())) throw err;
    const message = redact(err instanceof Error ? err.message : String(err), secrets());
    return fail(deps, deploy, step, 'failed', message);
  }
}

function validate(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Result {
  const build = deps.build !== undefined && buildsFromSource(app, deploy);
  if (!deploy.imageRef && !build) return fail(deps, deploy, 'validate', 'failed', 'no image to deploy: set image_ref on the app or the deploy');
  if (deploy.imageRef && !isImageRef(deploy.imageRef)) return fail(deps, deploy, 'validate', 'failed', `image reference ${JSON.stringify(deploy.imageRef)} is not valid: the engine would refuse it`);
  // A rollback carries the snapshot of the deploy it runs again (src/desired/deploys.ts): that environment,
  // not today's variables, and the config version it was taken at (so the app shows config_changed).
  const restored = deploy.trigger === 'rollback' && deploy.envSnapshotSealed !== null;
  const missing = restored ? [] : deps.env.missingRequired(app.id);
  if (missing.length > 0) return fail(deps, deploy, 'validate', 'failed', `missing required environment variables: ${missing.join(', ')}`);
  // A stack service's environment is its Compose `environment` (interpolated), over its links' variables.
  const stack = stackSpecOf(deps.sealer, deploy);
  const env = restored ? deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed!) : { ...deps.env.resolve(app.id).env, ...stack?.service.environment };
  const previous = lastSuccessful(deps.db, app.id);
  const previousEnv = previous?.envSnapshotSealed ? deps.sealer.openJson<Record<string, string>>(previous.envSnapshotSealed) : undefined;
  updateDeploy(deps.db, deps.bus, deploy.id, {
    step: build ? 'clone' : 'pull',
    envSnapshotSealed: restored ? deploy.envSnapshotSealed : deps.sealer.sealJson(env),
    envDiff: envDiff(previousEnv, env),
    configVersion: restored ? deploy.configVersion : app.configVersion,
  });
  return { requeueAfterMs: 0 };
}

async function pull(deps: AppReconcilerDeps, deploy: DeployRow, secrets: () => string[]): Promise<Result> {
  const ref = deploy.imageRef!;
  const present = await deps.runtime.hasImage(ref);
  if (!mustPull(ref, present)) {
    event(deps, deploy, 'pull', `image ${ref} is present; not pulled`);
  } else {
    event(deps, deploy, 'pull', `pulling ${ref}`);
    try {
      const seen = new Set<string>();
      await deps.runtime.pull(ref, (p) => {
        const line = [p.id, p.status].filter(Boolean).join(': ');
        if (/complete|exists|Digest|Status/.test(p.status) && !seen.has(line)) {
          seen.add(line);
          event(deps, deploy, 'pull', redact(line, secrets()));
        }
      });
    } catch (err) {
      const message = redact(err instanceof Error ? err.message : String(err), secrets());
      if (!present) throw new Error(`pull of ${ref} failed: ${message}`);
      event(deps, deploy, 'pull', `pull of ${ref} failed (${message}); using the local image`, 'warn');
    }
  }
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'create' });
  return { requeueAfterMs: 0 };
}

async function create(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<Result> {
  const name = containerName(deps.settings.instance, app.name, deploy.id);
  await deps.runtime.remove(name); // a half-made container of an interrupted pass
  await deps.runtime.ensureNetwork(deps.settings.network);
  const env = deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed!);
  // An adopted app deployed before any steady pass recorded its container as live still has one to replace.
  const previous = app.liveContainerName ?? (app.appType === 'adopted_container' ? app.source : null);
  let oldStoppedAt = deploy.oldStoppedAt;
  if (app.deployStrategy === 'stop_first' && previous && !oldStoppedAt) {
    // One writer at a time: the old version stops (kept, so a failed start can bring it back) before the
    // new one starts. The proxy keeps the old address meanwhile and retries its dial errors (5 s).
    for (const extra of await oldReplicas(deps, app, previous)) await deps.runtime.stop(extra, graceOf(deps, app));
    await deps.runtime.stop(previous, graceOf(deps, app), { adopted: app.appType === 'adopted_container' && previous === app.source });
    oldStoppedAt = new Date(deps.now()).toISOString();
    updateDeploy(deps.db, deps.bus, deploy.id, { oldStoppedAt });
    event(deps, deploy, 'stop_old', `stop_first: old container ${previous} stopped before the new one starts`);
  }
  const stack = stackSpecOf(deps.sealer, deploy);
  ensureAppVolumes(deps.settings, app, stack);
  // Every replica of the new version starts beside the old ones (at least one: a deploy of an app scaled
  // to 0 still proves its image, and the scale-down stops it again after the switch).
  const count = Math.max(1, app.replicas);
  await deps.runtime.run(appContainerSpec(deps.settings, app, deploy, env, 0, stack));
  // The first replica proves the image (and does any one-time work: a Swarm's registry push); the others
  // start together, the engine's create + start (hundreds of ms each) overlapping. All settle before the
  // step ends, so a retry of the step never races a start still in flight.
  const others = Array.from({ length: count - 1 }, (_, i) => appContainerSpec(deps.settings, app, deploy, env, i + 1, stack));
  await settleAll(
    others.map(async (spec) => {
      await deps.runtime.remove(spec.name); // a half-made one of an interrupted pass
      await deps.runtime.run(spec);
    }),
  );
  const now = deps.now();
  const budgetMs = checkBudgetMs(deps, deploy);
  updateDeploy(deps.db, deps.bus, deploy.id, {
    step: 'health_check',
    stagingContainer: name,
    previousContainer: previous,
    deadline: iso(now + budgetMs),
  });
  event(deps, deploy, 'start', count === 1 ? `staging container ${name} started` : `staging containers ${name} and ${count - 1} more replica(s) started`);
  const waitsOn = stack?.service.runsOnce
    ? 'it to run to completion and exit 0'
    : stack && !probesHttp(stack.service)
      ? (stack.service.healthcheck?.kind === 'command' ? 'its Compose healthcheck' : 'it to keep running')
      : `GET ${app.healthCheckPath} on port ${app.internalPort}`;
  event(deps, deploy, 'health_check', `waiting for ${waitsOn} (${budgetMs / 1000} s timeout)`);
  return { requeueAfterMs: 0 };
}

/** How long a one-shot stack service (service_completed_successfully) may run before its deploy fails. */
export const RUN_ONCE_TIMEOUT_MS = 30 * 60_000;

/** The health check's budget: svc's health timeout, or a one-shot's time to run to completion. */
const checkBudgetMs = (deps: AppReconcilerDeps, deploy: Pick<DeployRow, 'stackService'>) =>
  stackSpecOf(deps.sealer, deploy)?.service.runsOnce ? Math.max(RUN_ONCE_TIMEOUT_MS, deps.settings.healthTimeoutMs) : deps.settings.healthTimeoutMs;

/**
 * A one-shot stack service (a migration that others wait on with service_completed_successfully): its deploy
 * succeeds when its container exits 0, and fails on any other exit with the code and the end of its output.
 * Nothing routes to it, so there is no switch: the exited container is recorded as live (no address) and the
 * app reconciler never restarts it (planApp).
 */
async function awaitCompletion(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<Result> {
  const started = Date.parse(deploy.deadline!) - checkBudgetMs(deps, deploy);
  const name = deploy.stagingContainer!;
  const info = await deps.runtime.inspect(name, deps.settings.network);
  const elapsed = deps.now() - started;
  if (info && (info.running || info.state === 'created' || info.state === 'restarting')) {
    if (deps.now() < Date.parse(deploy.deadline!)) return { requeueAfterMs: elapsed < 2_000 ? 25 : elapsed < 10_000 ? 100 : 250 };
    await deps.runtime.remove(name);
    return fail(deps, deploy, 'health_check', 'failed', `${app.name} did not run to completion within ${Math.round((Date.parse(deploy.deadline!) - started) / 1000)} s; stopped and removed`);
  }
  if (!info) return fail(deps, deploy, 'health_check', 'failed', `container ${name} is gone before it ran to completion`);
  if (info.exitCode !== 0) {
    const output = redact(await collectOutput(deps.runtime, name).catch(() => ''), deps.env.resolve(app.id).secrets).trim();
    const tail = output.split('\n').slice(-5).join(' | ').slice(-600);
    await deps.runtime.remove(name);
    return fail(deps, deploy, 'health_check', 'failed', `exited with code ${info.exitCode ?? 'unknown'} (a service others wait on with service_completed_successfully must exit 0)${tail ? `; its last output: ${tail}` : ''}`);
  }
  event(deps, deploy, 'health_check', `ran to completion (exit 0) after ${elapsed} ms`);
  observeLive(deps.db, app.id, { containerName: info.name, containerId: info.id, address: null });
  dropInstances(deps.db, app.id, 1);
  await deps.dns.sync();
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'finalize', deadline: null });
  return { requeueAfterMs: 0 };
}

async function healthCheck(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<Result> {
  if (stackSpecOf(deps.sealer, deploy)?.service.runsOnce) return awaitCompletion(deps, app, deploy);
  const started = Date.parse(deploy.deadline!) - checkBudgetMs(deps, deploy);
  const replicas = await stagingReplicas(deps, app, deploy);
  // Every replica must pass; the first that fails fails them all (none is switched to).
  let httpStatus: number | undefined;
  let waitMs = 0;
  for (const name of replicas) {
    const check = await checkHealth(deps, app, name, started);
    if (check.verdict.kind === 'failed') {
      for (const r of replicas) await deps.runtime.remove(r);
      const which = replicas.length > 1 ? `${name}: ` : '';
      if (deploy.oldStoppedAt && deploy.previousContainer) {
        await restartOld(deps, app, deploy.previousContainer);
        return fail(deps, deploy, 'health_check', 'auto_rollback', `${which}${check.verdict.reason}; staging container${replicas.length > 1 ? 's' : ''} removed, the old container ${deploy.previousContainer} started again (stop_first)`);
      }
      return fail(deps, deploy, 'health_check', 'auto_rollback', `${which}${check.verdict.reason}; staging container${replicas.length > 1 ? 's' : ''} removed, the previous version keeps serving`);
    }
    if (check.verdict.kind === 'wait') waitMs = Math.max(waitMs, check.verdict.afterMs);
    httpStatus = check.httpStatus;
  }
  if (waitMs > 0) return { requeueAfterMs: waitMs };
  event(deps, deploy, 'health_check', `${replicas.length > 1 ? `all ${replicas.length} replicas ` : ''}healthy after ${deps.now() - started} ms${httpStatus === undefined ? '' : ` (HTTP ${httpStatus})`}`);
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'route_update' });
  return { requeueAfterMs: 0 };
}

async function routeUpdate(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow, specPort: number): Promise<Result> {
  const info = await deps.runtime.inspect(deploy.stagingContainer!, deps.settings.network);
  if (!info?.running || !info.address) throw new Error(`staging container ${deploy.stagingContainer} stopped before the switch`);
  // The switch: the live container is whatever the DNS answer points at, and the route's port is the one
  // it listens on, so all three change together.
  const others: { slot: number; name: string; id: string; address: string }[] = [];
  for (const name of (await stagingReplicas(deps, app, deploy)).slice(1)) {
    const r = await deps.runtime.inspect(name, deps.settings.network);
    if (!r?.running || !r.address) throw new Error(`staging container ${name} stopped before the switch`);
    others.push({ slot: Number(r.labels[SLOT_LABEL]), name, id: r.id, address: r.address });
  }
  // One write: slot 0 and every other replica of the new version; rows of slots it does not fill go (their
  // old containers drain with the old first one, stopOld).
  deps.db.transaction(() => {
    observeLive(deps.db, app.id, { containerName: info.name, containerId: info.id, address: info.address }, { port: app.internalPort, portBasis: specPort });
    for (const o of others) observeInstance(deps.db, app.id, o.slot, { deployId: deploy.id, containerName: o.name, containerId: o.id, address: o.address, healFailures: 0, healNotBefore: null });
    dropInstances(deps.db, app.id, others.length + 1);
  });
  await deps.dns.sync();
  deps.bus.emit('live', app.id);
  deps.enqueue(keyOf('proxy', 'main'));
  event(deps, deploy, 'route_update', `traffic for ${app.name} now goes to ${info.name}`);
  if (deploy.oldStoppedAt) {
    // From the old container's stop to the new one in the DNS answer: what no container served the app.
    const downtimeMs = deps.now() - Date.parse(deploy.oldStoppedAt);
    event(deps, deploy, 'route_update', `stop_first downtime: ${downtimeMs} ms (old container stopped until the new one took traffic)`);
  }
  // The old version drains from here on, apart from the deploy (drain.ts), which succeeds at once.
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'stop_old', deadline: null });
  return stopOld(deps, app, { ...deploy, step: 'stop_old' });
}

/**
 * The old version drains from the switch on (drain.ts) and the deploy ends here: a deploy row left at this
 * step by an older daemon (which drained inside the deploy) hands its old version to the drain the same way.
 */
async function stopOld(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<Result> {
  if (!deploy.previousContainer) event(deps, deploy, 'stop_old', 'no previous container');
  else if (deploy.oldStoppedAt) event(deps, deploy, 'stop_old', `stop_first: old container ${deploy.previousContainer} was stopped before the switch`);
  else if (deploy.drainFrom === null) await startDrain(deps, app, deploy);
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'finalize' });
  return { requeueAfterMs: 0 };
}

function finalize(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Result {
  // The deploy's image becomes the app's (shownImageRef) while the spec's image_ref stays what it is now;
  // an adopted app counts as managed from here on (shownAppType).
  observeApp(deps.db, app.id, {
    liveDeployId: deploy.id,
    liveImage: deploy.imageRef,
    imageBasis: app.imageRef,
    status: 'active',
    serving: true,
    statusReason: null,
    healFailures: 0,
    healNotBefore: null,
  });
  const watched = keepsOld(deps, app, deploy);
  updateDeploy(deps.db, deps.bus, deploy.id, {
    status: 'success',
    step: watched ? 'watch' : null,
    deadline: null,
    watchUntil: watched ? iso(deps.now() + deps.settings.watchMs) : null,
    completedAt: nowIso(),
  });
  event(deps, deploy, 'finalize', `deploy ${deploy.id} of ${app.name} succeeded`);
  return { requeueAfterMs: 0 };
}

/** Whether this deploy keeps its old container for a watch window (not a first, adopted or rollback deploy). */
function keepsOld(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): boolean {
  // A one-shot has nothing to watch: its run is over, and the old run is not one to go back to.
  if (stackSpecOf(deps.sealer, deploy)?.service.runsOnce) return false;
  const adopted = app.appType === 'adopted_container' && deploy.previousContainer === app.source;
  return watchesOld({
    watchMs: deps.settings.watchMs,
    previousContainer: adopted ? null : deploy.previousContainer,
    previousDeployId: app.currentDeployId,
    trigger: deploy.trigger,
  });
}

/** The containers of a deploy in progress, slot 0 first. */
async function stagingReplicas(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<string[]> {
  const list = await deps.runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: deps.settings.instance, [LABELS.app]: app.name, [LABELS.deploy]: String(deploy.id) });
  const slotOf = (c: { labels: Record<string, string> }) => Number(c.labels[SLOT_LABEL] ?? 0);
  const mine = list.filter((c) => c.labels[LABELS.appId] === String(app.id)).sort((a, b) => slotOf(a) - slotOf(b));
  return mine.length > 0 ? mine.map((c) => c.name) : [deploy.stagingContainer!];
}

/** Waits for every one of `work` to end, then throws the first failure (none is left running behind a retry). */
async function settleAll(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The other replicas of the old version (`<old>-r<slot>`). */
async function oldReplicas(deps: AppReconcilerDeps, app: AppView, old: string): Promise<string[]> {
  const list = await deps.runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: deps.settings.instance, [LABELS.app]: app.name });
  return list.filter((c) => c.name.startsWith(`${old}-r`)).map((c) => c.name);
}

/** stop_first whose new version failed: the old version (stopped, kept) serves again. */
async function restartOld(deps: AppReconcilerDeps, app: AppView, old: string) {
  await deps.runtime.start(old);
  for (const extra of await oldReplicas(deps, app, old)) await deps.runtime.start(extra);
}

/** Ends the deploy; the next pass (right away) brings the app status up to date and picks the next deploy. */
function fail(deps: AppReconcilerDeps, deploy: DeployRow, step: string, status: 'failed' | 'auto_rollback', message: string): Result {
  event(deps, deploy, step, message, 'error');
  deps.db.transaction(() => {
    updateDeploy(deps.db, deps.bus, deploy.id, { status, step: null, deadline: null, error: message, completedAt: nowIso() });
    deployEnded(deps, deploy, status, step, message);
  });
  return { requeueAfterMs: 0 };
}

export { fail as failDeploy };

function event(deps: AppReconcilerDeps, deploy: Pick<DeployRow, 'id'>, step: string, message: string, level: EventLevel = 'info') {
  addDeployEvent(deps.db, deps.bus, deploy.id, step, message, level);
}
