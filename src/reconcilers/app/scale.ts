// Effects of scaling (replicas-plan.ts): the replicas of the live version beyond the first are added,
// probed into the DNS answer, healed with backoff and removed after leaving the answer, each on its own.
// Nothing here switches a version: a deploy does that (pipeline.ts).
import { exitWhy } from './exit-why.js';
import type { Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import type { AppView } from '../../store/app-view.js';
import { addAppEvent, getDeploy } from '../../store/deploys.js';
import { dropInstance, observeInstance, readInstances } from '../../observed/apps.js';
import { NetworkGoneError, RemovalInProgressError, REMOVAL_RETRY_MS } from '../../runtime/runtime.js';
import { redact, restartBackoffMs } from '../restart.js';
import { appContainerSpec, ensureAppVolumes, graceOf, stackSpecOf } from './container-spec.js';
import { checkHealth } from './health-check.js';
import type { ObservedContainer } from './plan.js';
import { planReplicas, type InstanceFacts, type ReplicaAction } from './replicas-plan.js';
import type { AppReconcilerDeps } from './deps.js';

export const instanceFacts = (deps: AppReconcilerDeps, appId: number): InstanceFacts[] =>
  readInstances(deps.db, appId).map((r) => ({
    slot: r.slot,
    deployId: r.deployId,
    containerName: r.containerName,
    address: r.address,
    healFailures: r.healFailures,
    healNotBeforeMs: r.healNotBefore ? Date.parse(r.healNotBefore) : null,
    updatedAtMs: Date.parse(r.updatedAt),
  }));

/** Converges the extra replicas; returns when to look again (undefined: nothing pending). */
export async function scaleReplicas(deps: AppReconcilerDeps, app: AppView, containers: ObservedContainer[], liveDeployId: number | null): Promise<Result> {
  const instances = instanceFacts(deps, app.id);
  const actions = planReplicas({
    replicas: app.replicas,
    liveDeployId,
    instances,
    containers,
    nowMs: deps.now(),
    dnsRefreshMs: deps.settings.dnsRefreshMs,
    healthTimeoutMs: deps.settings.healthTimeoutMs,
  });
  let requeue = Infinity;
  let dnsChanged = false;
  for (const a of actions) {
    const row = instances.find((r) => r.slot === a.slot);
    try {
      const r = await act(deps, app, a, row, liveDeployId);
      dnsChanged ||= r.dns;
      requeue = Math.min(requeue, r.afterMs);
    } catch (err) {
      if (err instanceof RemovalInProgressError) {
        requeue = Math.min(requeue, REMOVAL_RETRY_MS);
        continue;
      }
      if (!(await deps.runtime.ping())) throw err;
      const failures = (row?.healFailures ?? 0) + 1;
      const name = row?.containerName ?? `replica ${a.slot}`;
      if (row) observeInstance(deps.db, app.id, a.slot, { healFailures: failures, healNotBefore: iso(deps.now() + restartBackoffMs(failures)) });
      addAppEvent(deps.db, app.id, 'heal', `replica ${a.slot} (${name}): ${redact(err instanceof Error ? err.message : String(err), deps.env.resolve(app.id).secrets)}`, 'error');
      requeue = Math.min(requeue, restartBackoffMs(failures) || 1_000);
    }
  }
  if (dnsChanged) {
    await deps.dns.sync();
    deps.enqueue(keyOf('proxy', 'main'));
  }
  return requeue === Infinity ? {} : { requeueAfterMs: requeue };
}

const iso = (ms: number) => new Date(ms).toISOString();

async function act(deps: AppReconcilerDeps, app: AppView, a: ReplicaAction, row: InstanceFacts | undefined, liveDeployId: number | null): Promise<{ dns: boolean; afterMs: number }> {
  const { db } = deps;
  switch (a.kind) {
    case 'wait':
      return { dns: false, afterMs: a.afterMs };
    case 'reset':
      observeInstance(db, app.id, a.slot, { healFailures: 0, healNotBefore: null });
      return { dns: false, afterMs: Infinity };
    case 'unpublish':
      observeInstance(db, app.id, a.slot, { address: null });
      return { dns: true, afterMs: deps.settings.dnsRefreshMs + 50 };
    case 'remove': {
      if (a.container) {
        await deps.runtime.stop(a.container, graceOf(deps, app));
        await deps.runtime.remove(a.container);
      }
      dropInstance(db, app.id, a.slot);
      addAppEvent(db, app.id, 'scale', `replica ${a.slot} (${row?.containerName}) stopped and removed`);
      return { dns: true, afterMs: 0 };
    }
    case 'create': {
      const deploy = liveDeployId === null ? undefined : getDeploy(db, liveDeployId);
      if (!deploy?.imageRef || !deploy.envSnapshotSealed) throw new Error(`deploy ${liveDeployId} has no image or env snapshot to run a replica from`);
      if (a.replace) {
        // Out of the answer before its container goes.
        if (observeInstance(db, app.id, a.slot, { address: null })) await deps.dns.sync();
        await deps.runtime.remove(a.replace);
      }
      const stack = stackSpecOf(deps.sealer, deploy);
      const spec = appContainerSpec(deps.settings, app, deploy, deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed), a.slot, stack);
      await deps.runtime.remove(spec.name); // a half-made one of an interrupted pass
      await deps.runtime.ensureNetwork(deps.settings.network);
      ensureAppVolumes(deps.settings, app, stack);
      const info = await deps.runtime.run(spec);
      // Another version's counters say nothing about this one; the same version's keep counting (a crash loop).
      const fresh = row?.deployId !== deploy.id ? { healFailures: 0, healNotBefore: null } : {};
      observeInstance(db, app.id, a.slot, { deployId: deploy.id, containerName: spec.name, containerId: info.id, address: null, ...fresh });
      addAppEvent(db, app.id, 'scale', a.replace ? `replica ${a.slot} was gone or of another version; ${spec.name} started` : `replica ${a.slot} added: ${spec.name} started`);
      return { dns: false, afterMs: 25 };
    }
    case 'restart': {
      const name = row!.containerName;
      const failures = row!.healFailures + 1;
      // Out of the answer before the start, not after: the start takes the engine a few hundred ms, and
      // every request the proxy sends the dead address meanwhile is a dial error (a 502 for a POST in
      // Caddy 2.6.2, which cannot resend a body). It joins again after its own health check (`probe`).
      if (observeInstance(db, app.id, a.slot, { address: null, healFailures: failures, healNotBefore: iso(deps.now() + restartBackoffMs(failures)) })) await deps.dns.sync();
      try {
        await deps.runtime.start(name);
      } catch (err) {
        if (!(err instanceof NetworkGoneError)) throw err;
        // Its network was removed behind svc's back: this container can never start again. Removed, and
        // uncounted (nothing says the app crashed): the next pass creates it from its deploy, on the network
        // ensured again.
        await deps.runtime.remove(name);
        observeInstance(db, app.id, a.slot, { healFailures: row!.healFailures, healNotBefore: row!.healNotBeforeMs === null ? null : iso(row!.healNotBeforeMs) });
        addAppEvent(db, app.id, 'heal', `replica ${a.slot} (${name}): network ${deps.settings.network} was gone; recreating it`, 'warn');
        return { dns: false, afterMs: 0 };
      }
      const why = exitWhy(a);
      addAppEvent(db, app.id, 'heal', `replica ${a.slot} (${name}) ${why}; restarted (attempt ${failures})`, 'warn');
      return { dns: false, afterMs: 25 };
    }
    case 'probe': {
      const name = row!.containerName;
      const { info, verdict } = await checkHealth(deps, { ...app, internalPort: app.livePort ?? app.internalPort }, name, a.startedAtMs);
      if (verdict.kind === 'wait') return { dns: false, afterMs: verdict.afterMs };
      if (verdict.kind === 'failed') {
        await deps.runtime.stop(name, graceOf(deps, app));
        throw new Error(`${name} did not become healthy: ${verdict.reason}`);
      }
      observeInstance(db, app.id, a.slot, { address: info!.address!, containerId: info!.id });
      return { dns: true, afterMs: Infinity };
    }
  }
}
