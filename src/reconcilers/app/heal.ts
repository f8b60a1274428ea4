// Self-healing: the live container of a successful deploy is not running. A container that died or was
// killed is started again, and the attempt counts, so a crash-looping app backs off like the kubelet
// instead of spinning the daemon. A container that is gone (`docker rm -f`, or the engine still removing
// it) is not a crash loop: it is recreated at once from its deploy's image and env snapshot, uncounted
// unless the recreation itself fails.
import { exitWhy } from './exit-why.js';
import type { Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import { appContainerSpec, ensureAppVolumes, stackSpecOf } from './container-spec.js';
import { addAppEvent, getDeploy } from '../../store/deploys.js';
import type { AppView } from '../../store/app-view.js';
import { observeApp, observeLive } from '../../observed/apps.js';
import type { AppReconcilerDeps } from './deps.js';
import type { AppAction } from './plan.js';
import { redact, restartBackoffMs } from '../restart.js';
import { crashing } from './notices.js';
import { NameInUseError, NetworkGoneError, RemovalInProgressError, REMOVAL_RETRY_MS, type ContainerInfo } from '../../runtime/runtime.js';
import { mark, span } from '../../trace.js';

/** What a heal did: when to look again, and whether the live container runs now (for the app's status). */
export type HealResult = Result & { liveRunning: boolean };

/**
 * What the plan saw (plan.ts `heal`): `exists` (stopped, restart it) or not; `listed`: the engine still listed
 * it (being removed) rather than gone; why it stopped, for the event.
 */
export async function heal(deps: AppReconcilerDeps, app: AppView, seen: Pick<Extract<AppAction, { kind: 'heal' }>, 'exists' | 'listed' | 'oomKilled' | 'oomLikely'>): Promise<HealResult> {
  const { exists, oomKilled = false, oomLikely = false, listed = true } = seen;
  const name = app.liveContainerName!;
  mark('heal', exists ? 'restart' : 'recreate', name);
  let how: 'restarted' | 'recreated' = exists ? 'restarted' : 'recreated';
  let failures = app.healFailures;
  let created: ContainerInfo | undefined;
  let networkGone = false;
  // The dead one leaves the answer before the restart and joins again only after its own health check
  // (the steady pass probes it), alone or beside other replicas. Beside them, the proxy would keep sending
  // it requests while the engine starts it and before it listens. Alone too: Caddy's passive health marks
  // an address down for 2 s after one failed dial (src/proxy/config.ts DEAD_REPLICA), and the restarted
  // container gets the same address, so every dial of it while it was down kept it marked 2 s past its
  // start (bench:heal, issue 36: start -> first 200 2.3-2.4 s). Out of the answer, the proxy dials
  // nothing: a request waits in its retry interval until the address is back. The app's route stays the
  // DNS one meanwhile (routes.ts noContainer: a live container being healed).
  if (app.liveAddress !== null && observeLive(deps.db, app.id, { address: null })) await span('heal', 'unpublish', () => deps.dns.sync(), name);
  try {
    // Also re-tunes the bridge (bridge-neighbours.ts) in case the engine recreated it since the deploy.
    await deps.runtime.ensureNetwork(deps.settings.network);
    if (exists) {
      failures = count(deps, app, failures + 1);
      try {
        await deps.runtime.start(name);
      } catch (err) {
        if (err instanceof NetworkGoneError) {
          // Its network was removed behind svc's back: the container can never start again. Make the network
          // again and recreate the container from its deploy, uncounted (nothing says the app crashed).
          await deps.runtime.ensureNetwork(deps.settings.network);
          networkGone = true;
        } else if (!(await isGone(deps, name))) throw err; // removed between our look and the start ("marked for removal", 404): recreate, uncounted
        failures = count(deps, app, app.healFailures);
        how = 'recreated';
      }
    }
    if (how === 'recreated') created = await recreate(deps, app, name, exists || listed);
  } catch (err) {
    if (err instanceof RemovalInProgressError) return { requeueAfterMs: REMOVAL_RETRY_MS, liveRunning: false }; // not a failure
    if (!(await deps.runtime.ping())) throw err; // engine down: back off and retry, nothing to record
    if (how === 'recreated') failures = count(deps, app, failures + 1);
    const message = redact(err instanceof Error ? err.message : String(err), deps.env.resolve(app.id).secrets);
    addAppEvent(deps.db, app.id, 'heal', `could not restart ${name}: ${message}`, 'error');
    return { requeueAfterMs: restartBackoffMs(failures) || 1_000, liveRunning: false };
  }
  // No look at it here: a restarted container keeps its id, a recreated one was inspected by the run, and
  // the steady pass (at once) inspects and probes it, then lets it join the answer.
  // Its name too: a state restored under another instance name (a new host) names a container of the old
  // one, and the container made from the deploy carries this instance's name; kept, it would be an orphan.
  if (created) observeLive(deps.db, app.id, { containerId: created.id, containerName: created.name });
  deps.bus.emit('live', app.id);
  deps.enqueue(keyOf('proxy', 'main'));
  const why = oomKilled || oomLikely ? exitWhy({ oomKilled, oomLikely, exitCode: 137 }) : 'was not running';
  const message =
    how === 'restarted'
      ? `live container ${name} ${why}; restarted (attempt ${failures})`
      : networkGone
        ? `network ${deps.settings.network} of live container ${name} was gone; network and container made again`
        : `live container ${name} was gone; recreated`;
  addAppEvent(deps.db, app.id, 'heal', message, 'warn');
  deps.log.warn('healed app container', { app: app.name, container: name, how, attempt: failures });
  return { requeueAfterMs: 0, liveRunning: created?.running ?? true };
}

/** Records `failures` and the backoff it implies before the next restart; returns it. */
function count(deps: AppReconcilerDeps, app: AppView, failures: number): number {
  const notBefore = failures > 0 ? new Date(deps.now() + restartBackoffMs(failures)).toISOString() : null;
  observeApp(deps.db, app.id, { healFailures: failures, healNotBefore: notBefore });
  crashing(deps, app.id, app.liveContainerName!, failures, restartBackoffMs(failures), deps.now());
  return failures;
}

async function isGone(deps: AppReconcilerDeps, name: string): Promise<boolean> {
  const info = await deps.runtime.inspect(name);
  return !info || info.state === 'removing' || info.state === 'dead';
}

/**
 * Runs the container its deploy made (a removal still in progress throws RemovalInProgressError: come back).
 * One the pass saw gone is created at once, without asking the engine to remove it first (the `destroy`
 * event's pass: the name is free); should the name be taken after all, it is removed and created again.
 */
async function recreate(deps: AppReconcilerDeps, app: AppView, name: string, listed: boolean): Promise<ContainerInfo> {
  const deploy = getDeploy(deps.db, app.currentDeployId!);
  if (!deploy?.imageRef || !deploy.envSnapshotSealed) throw new Error(`deploy ${app.currentDeployId} has no image or env snapshot to recreate from`);
  const stack = stackSpecOf(deps.sealer, deploy);
  const spec = appContainerSpec(deps.settings, app, deploy, deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed), 0, stack);
  ensureAppVolumes(deps.settings, app, stack);
  if (listed) await deps.runtime.remove(name);
  try {
    return await deps.runtime.run(spec);
  } catch (err) {
    if (listed || !(err instanceof NameInUseError)) throw err;
    await deps.runtime.remove(name);
    return deps.runtime.run(spec);
  }
}
