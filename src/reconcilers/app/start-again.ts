// Starting an app's stopped container again where the deploy state machine needs that very container back:
// the kept version at a flip-back, the old version after a failed stop_first deploy. When its network was
// removed behind svc's back it can never start again (NetworkGoneError: the engine keeps the old network's
// id in it), so it is made again from its own deploy (pinned image, env snapshot, slot) on the network made
// again, as the heal does for the live container (heal.ts).
import type { AppReconcilerDeps } from './deps.js';
import type { AppView } from '../../store/app-view.js';
import { getDeploy } from '../../store/deploys.js';
import { LABELS, NetworkGoneError } from '../../runtime/runtime.js';
import { appContainerSpec, ensureAppVolumes, SLOT_LABEL, stackSpecOf } from './container-spec.js';

/** Starts `name` again: `started`, or `recreated` when its network was gone. */
export async function startAgain(deps: AppReconcilerDeps, app: AppView, name: string): Promise<'started' | 'recreated'> {
  try {
    await deps.runtime.start(name);
    return 'started';
  } catch (err) {
    if (!(err instanceof NetworkGoneError)) throw err;
  }
  const info = await deps.runtime.inspect(name);
  const deploy = info && getDeploy(deps.db, Number(info.labels[LABELS.deploy]));
  if (!info || !deploy?.imageRef || !deploy.envSnapshotSealed) throw new Error(`container ${name} cannot start again (its network is gone) and its deploy is not known to make it again`);
  const stack = stackSpecOf(deps.sealer, deploy);
  const spec = appContainerSpec(deps.settings, app, deploy, deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed), Number(info.labels[SLOT_LABEL] ?? 0), stack);
  if (spec.name !== name) throw new Error(`container ${name} cannot start again (its network is gone) and is not one its deploy ${deploy.id} would make`);
  await deps.runtime.ensureNetwork(deps.settings.network);
  ensureAppVolumes(deps.settings, app, stack);
  await deps.runtime.remove(name);
  await deps.runtime.run(spec);
  return 'recreated';
}
