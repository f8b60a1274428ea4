// The stack reconciler (`stack:<name>`, issue 32): walks a stack deploy (plan.ts) by queueing deploys of its
// service apps, one service at a time, and following them; the app reconciler runs each (blue/green or
// stop_first, health check, switch, drain). After a failed service it rolls the replaced ones back. Once a
// stack is deleted it removes its networks when no container of it is left. Never sleeps: a wait is a requeue.
import type { Bus } from '../../controller/bus.js';
import type { Enqueue, Reconciler, Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import type { Runtime } from '../../runtime/runtime.js';
import { LABELS } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import { createDeploy, getDeploy, listDeployEvents } from '../../store/deploys.js';
import { nowIso, type StackDeployRow, type StackDeployStep, type StackRow } from '../../store/schema/index.js';
import { activeStackDeploy, addStackEvent, getStackByName, listStacks, updateStackDeploy } from '../../store/stacks.js';
import { getApp } from '../../store/apps.js';
import { STACK_LABEL, stackNetworkPrefix } from '../../stacks/service-spec.js';
import { emptyTrash } from '../../volumes/dirs.js';
import { planStack } from './plan.js';

export interface StackReconcilerDeps {
  db: Db;
  bus: Bus;
  runtime: Runtime;
  enqueue: Enqueue;
  log: Logger;
  settings: { network: string; instance: string; dataDir: string };
}

/** While a deleted stack's containers are still being removed by their app reconcilers. */
const CLEANUP_POLL_MS = 500;

export function createStackReconciler(deps: StackReconcilerDeps): Reconciler {
  const { db } = deps;

  async function reconcile(name: string): Promise<Result> {
    const stack = getStackByName(db, name);
    if (!stack) return cleanup(name);
    const d = activeStackDeploy(db, stack.id);
    if (!d) return {};
    const action = planStack(d, (id) => getDeploy(db, id)?.status);
    const steps = d.steps.map((s) => ({ ...s }));
    const ev = (message: string, service?: string, level: 'info' | 'warn' | 'error' = 'info') => addStackEvent(db, { stackId: stack.id, stackDeployId: d.id, service, message, level });
    switch (action.kind) {
      case 'begin':
        updateStackDeploy(db, d.id, { status: 'running', startedAt: nowIso() });
        ev(`stack deploy ${d.id} (${d.trigger}) started: ${steps.map((s) => `${s.service} (${s.action})`).join(', ')}`);
        return { requeueAfterMs: 0 };
      case 'wait':
        return { requeueAfterMs: action.afterMs };
      case 'start_step':
        return startStep(stack, d, steps, action.index, ev);
      case 'step_done': {
        const s = steps[action.index]!;
        s.status = 'done';
        updateStackDeploy(db, d.id, { steps });
        const downtime = s.deployId ? listDeployEvents(db, s.deployId).find((e) => e.message.startsWith('stop_first downtime:')) : undefined;
        ev(`${s.service} deployed${downtime ? ` (${downtime.message})` : ''}`, s.service);
        return { requeueAfterMs: 0 };
      }
      case 'step_failed': {
        const s = steps[action.index]!;
        s.status = 'failed';
        const why = (s.deployId && getDeploy(db, s.deployId)?.error) || 'its deploy did not succeed';
        // The first failure is the deploy's error; a service deploying beside it may fail too.
        updateStackDeploy(db, d.id, { steps, phase: 'rollback', error: d.error ?? `service ${s.service}: ${why}` });
        ev(`${s.service} failed: ${why}; ${d.phase === 'rollback' ? 'the rollback goes on' : 'rolling back the services already replaced'}`, s.service, 'error');
        return { requeueAfterMs: 0 };
      }
      case 'rollback_step': {
        const s = steps[action.index]!;
        const previous = getDeploy(db, s.previousDeployId!);
        const app = getApp(db, s.appId);
        if (!previous || !app) {
          s.status = 'rolled_back';
          updateStackDeploy(db, d.id, { steps });
          ev(`${s.service}: nothing to roll back to`, s.service, 'warn');
          return { requeueAfterMs: 0 };
        }
        const back = createDeploy(db, deps.enqueue, deps.bus, { appId: app.id, appName: app.name, imageRef: previous.imageRef, trigger: 'rollback', origin: d.origin, rollbackOf: previous });
        Object.assign(s, { status: 'rolling_back', deployId: back.id });
        updateStackDeploy(db, d.id, { steps });
        ev(`${s.service}: rolling back to the definition of deploy ${previous.id} (deploy ${back.id})`, s.service, 'warn');
        return { requeueAfterMs: 0 };
      }
      case 'rollback_done': {
        const s = steps[action.index]!;
        s.status = 'rolled_back';
        updateStackDeploy(db, d.id, { steps });
        ev(action.ok ? `${s.service} rolled back` : `${s.service}: its rollback did not succeed`, s.service, action.ok ? 'info' : 'error');
        return { requeueAfterMs: 0 };
      }
      case 'keep_step': {
        const s = steps[action.index]!;
        s.status = 'kept';
        updateStackDeploy(db, d.id, { steps });
        ev(`${s.service} was created by this deploy: it stays (no earlier definition to go back to)`, s.service, 'warn');
        return { requeueAfterMs: 0 };
      }
      case 'finish':
        updateStackDeploy(db, d.id, { status: action.status, completedAt: nowIso() });
        ev(action.status === 'success' ? `stack deploy ${d.id} succeeded` : `stack deploy ${d.id} rolled back: ${d.error ?? ''}`, undefined, action.status === 'success' ? 'info' : 'error');
        // The next queued deploy, if any.
        return { requeueAfterMs: 0 };
    }
  }

  function startStep(stack: StackRow, d: StackDeployRow, steps: StackDeployStep[], index: number, ev: (m: string, s?: string, l?: 'info' | 'warn' | 'error') => unknown): Result {
    const s = steps[index]!;
    const app = getApp(db, s.appId);
    if (!app) {
      s.status = 'failed';
      updateStackDeploy(db, d.id, { steps, phase: 'rollback', error: `service ${s.service}: its app is gone` });
      return { requeueAfterMs: 0 };
    }
    const deploy = createDeploy(db, deps.enqueue, deps.bus, { appId: app.id, appName: app.name, imageRef: app.imageRef, trigger: 'manual', origin: d.origin });
    Object.assign(s, { status: 'running', deployId: deploy.id });
    updateStackDeploy(db, d.id, { steps });
    const what = s.action === 'create' ? 'creating' : `changing ${s.changes.join(', ')}`;
    ev(`${s.service}: ${what} (deploy ${deploy.id}${s.stopFirst ? ', stops first: the service is down until its replacement is healthy' : ', new containers beside the old'})`, s.service);
    deps.log.info('stack service deploy', { stack: stack.name, service: s.service, deploy: deploy.id });
    return { requeueAfterMs: 0 };
  }

  /** A deleted stack: its networks go once no container of it is left (the app reconcilers remove those). */
  async function cleanup(name: string): Promise<Result> {
    const left = await deps.runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: deps.settings.instance, [STACK_LABEL]: name });
    if (left.length > 0) return { requeueAfterMs: CLEANUP_POLL_MS };
    for (const n of await deps.runtime.listNetworks(stackNetworkPrefix(deps.settings.network, name))) {
      await deps.runtime.deleteNetwork(n);
      deps.log.info('removed stack network', { stack: name, network: n });
    }
    await emptyTrash(deps.settings.dataDir);
    deps.enqueue(keyOf('proxy', 'main'));
    return {};
  }

  return { kind: 'stack', reconcile, listNames: () => listStacks(db).map((s) => s.name) };
}
