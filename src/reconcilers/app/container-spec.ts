// The one definition of an app container, shared by the deploy pipeline, scaling and self-healing so a
// healed or added replica is exactly what the deploy created.
import { LABELS, type ContainerSpec } from '../../runtime/runtime.js';
import type { AppRow, DeployRow } from '../../store/schema/index.js';
import { replicaName } from './plan.js';

/** Label of an app container's replica slot (0 is the app's first replica, the one app_status records). */
export const SLOT_LABEL = 'svc.slot';

export function appContainerSpec(
  settings: { network: string; instance: string },
  app: Pick<AppRow, 'id' | 'name' | 'memoryMb' | 'cpus'>,
  deploy: Pick<DeployRow, 'id' | 'imageRef'>,
  env: Record<string, string>,
  slot = 0,
): ContainerSpec {
  return {
    name: replicaName(settings.instance, app.name, deploy.id, slot),
    image: deploy.imageRef!,
    env,
    network: settings.network,
    init: true,
    // The spec's limits when the container is made: a deploy, a heal that recreates, a scale-up.
    resources: { memoryMb: app.memoryMb, cpus: app.cpus },
    labels: {
      [LABELS.managed]: 'true',
      [LABELS.instance]: settings.instance,
      [LABELS.app]: app.name,
      [LABELS.appId]: String(app.id),
      [LABELS.deploy]: String(deploy.id),
      [LABELS.role]: 'app',
      [SLOT_LABEL]: String(slot),
    },
  };
}
