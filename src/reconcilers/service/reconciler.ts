// The service reconciler: observes one service (its row, its container, its readiness when it matters),
// asks plan.ts for the next step, does that one step (actions.ts) and says when to look again. Containers
// labelled as our services that no row owns are removed here too. It reads the spec (services) with what it
// observed before (service_status) and writes only the latter; dropping a deleted service's row once it is
// cleaned up is the services command's (forgetDeletedService), as a finalizer's end.
import { existsSync } from 'node:fs';
import type { Reconciler, Result } from '../../controller/types.js';
import { imageFor, kindOf, type Credentials, type ServiceKind } from '../../catalog/catalog.js';
import { openUpgradeOf } from '../../store/service-upgrades.js';
import { createUpgradeRunner } from './upgrade.js';
import { createCopyRunner } from './copy.js';
import { openCopyOf } from '../../store/service-copies.js';
import { LABELS, type ContainerInfo } from '../../runtime/runtime.js';
import { services } from '../../store/schema/index.js';
import { getServiceByName, openCredentials } from '../../store/services.js';
import type { ServiceView } from '../../store/service-view.js';
import { forgetDeletedService } from '../../desired/services.js';
import { httpProbe } from '../app/probe.js';
import { createActions } from './actions.js';
import { checkReady } from './readiness.js';
import { isNewStartRequest, planService, type ObservedService, type ServiceFacts } from './plan.js';
import type { ServiceReconcilerDeps } from './deps.js';

/** Builds the reconciler of `service:<name>` keys; main.ts registers it with the controller. */
export function createServiceReconciler(deps: ServiceReconcilerDeps): Reconciler {
  const { db, runtime, settings } = deps;
  const httpGet = deps.httpGet ?? httpProbe;
  const act = createActions(deps);
  const upgrader = createUpgradeRunner(deps);
  const copier = createCopyRunner(deps);
  const ours = { [LABELS.managed]: 'true', [LABELS.instance]: settings.instance, [LABELS.role]: 'service' };

  async function reconcile(name: string): Promise<Result> {
    const row = getServiceByName(db, name);
    const labelled = await runtime.list({ ...ours, [LABELS.service]: name }, settings.network);
    // The two containers of an open upgrade (the old kept one, the new one) belong to the row too.
    const upgrade = row ? openUpgradeOf(db, row.id) : undefined;
    const owned = new Set([row?.containerName, upgrade?.fromContainer, upgrade?.toContainer]);
    // Ours but owned by no row (or not one of the row's container names): remove.
    for (const c of labelled) {
      if (!row || !owned.has(c.name)) {
        deps.log.info('removing orphan service container', { service: name, container: c.name });
        await runtime.remove(c.id);
      }
    }
    if (!row) return {};

    // Only a container labelled as ours counts: a foreign one with the same name is never started or
    // stopped; creating ours then fails with the engine's name conflict, recorded in `error`.
    const info = labelled.find((c) => c.name === row.containerName);
    const kind = kindOf(row.type);
    const creds = openCredentials(deps.sealer, row);
    if (isNewStartRequest(row.startRequestedAt, row.startSeenAt)) act.resetHeal(row, row.startRequestedAt);
    let keptFor: number | undefined;
    if (upgrade && !row.deletedAt) {
      const r = await upgrader.advance(row, upgrade, kind, creds);
      if (!('keptFor' in r)) return r;
      keptFor = r.keptFor; // switched, the old one kept: the new container is the service's, planned below
    }
    const result = await planAndAct(row, kind, creds, info);
    if (keptFor === undefined) return result;
    return { requeueAfterMs: Math.min(result.requeueAfterMs ?? keptFor, keptFor) };
  }

  async function planAndAct(row: ServiceView, kind: ServiceKind, creds: Credentials, info: ContainerInfo | undefined): Promise<Result> {
    const name = row.name;
    const facts = toFacts(row, (kind.provisionsOnce ?? false) && row.provisionedAt === null);
    const configured = deps.images ? imageFor(kind, deps.images, row.version) : undefined;
    if (configured?.source === 'version' && configured.image !== row.imageRef) facts.newerImage = configured.image;
    const observed = toObserved(info);
    let ready: boolean | undefined;
    if (!facts.deleting && facts.desiredRunning && observed.running && row.status !== 'active') {
      ready = await checkReady(runtime, httpGet, row.containerName, settings.network, kind.readiness(creds), deps.tcpOpen);
    }
    const plan = planService(facts, observed, ready, deps.now());
    const a = plan.action;
    switch (a.kind) {
      case 'remove':
        await runtime.remove(row.containerName);
        return { requeueAfterMs: 0 };
      case 'purge':
        await act.purge(row);
        return { requeueAfterMs: 0 };
      case 'forget':
        forgetDeletedService(db, row.id);
        deps.log.info('service deleted', { service: name, purged: row.purgeOnDelete });
        return {};
      case 'stop':
        await runtime.stop(row.containerName, 10);
        act.writeStatus(row, plan.status);
        return {};
      case 'create':
      case 'start':
        return act.startContainer(row, kind, creds, a.kind, a.counts);
      case 'fail':
        return act.recordFailure(row, creds, a.message);
      case 'backoff':
        act.writeStatus(row, plan.status);
        return { requeueAfterMs: a.afterMs };
      case 'wait-ready':
        act.writeStatus(row, plan.status);
        return { requeueAfterMs: a.afterMs };
      case 'update-image':
        return act.updateImage(row, a.image);
      case 'provision-garage':
        return act.provisionGarage(row, creds);
      case 'mark-active': {
        // A preview's copy of its parent's data is loaded before anything sees the service active.
        const copy = openCopyOf(db, row.id);
        if (copy) await copier.run(row, kind, creds, copy);
        act.writeStatus(row, 'active', null);
        act.noteActivated(row);
        deps.log.info('service active', { service: name, type: row.type });
        return row.healFailures > 0 ? { requeueAfterMs: 60_000 } : {};
      }
      case 'none':
        if (a.resetHeal) act.resetHeal(row);
        act.writeStatus(row, plan.status);
        if (plan.status === 'active') act.noteActivated(row); // rows active before the column existed
        return a.afterMs === undefined ? {} : { requeueAfterMs: a.afterMs };
    }
  }

  /** Every service row plus every container labelled as one of our services (orphans get cleaned). */
  async function listNames(): Promise<string[]> {
    const names = new Set(db.select({ name: services.name }).from(services).all().map((s) => s.name));
    for (const c of await runtime.list(ours)) if (c.labels[LABELS.service]) names.add(c.labels[LABELS.service]);
    return [...names];
  }

  function toFacts(row: ServiceView, needsProvisioning: boolean): ServiceFacts {
    return {
      status: row.status,
      desiredRunning: row.desiredRunning,
      deleting: row.deletedAt !== null,
      purge: row.purgeOnDelete,
      dataDirExists: existsSync(row.dataDir),
      needsProvisioning,
      healFailures: row.healFailures,
      healNotBeforeMs: row.healNotBefore ? Date.parse(row.healNotBefore) : null,
    };
  }

  return { kind: 'service', reconcile, listNames };
}

function toObserved(info: ContainerInfo | undefined): ObservedService {
  if (!info) return { exists: false, running: false };
  return {
    exists: true,
    running: info.running,
    exitCode: info.exitCode,
    error: info.error || undefined,
    startedAtMs: info.startedAt ? Date.parse(info.startedAt) : undefined,
  };
}
