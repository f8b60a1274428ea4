// The one definition of an app container, shared by the deploy pipeline and self-healing so a healed
// container is exactly what the deploy created.
import { LABELS, type ContainerSpec } from '../../runtime/runtime.js';
import type { AppRow, DeployRow } from '../../store/schema/index.js';
import { containerName } from './plan.js';

export function appContainerSpec(
  settings: { network: string; instance: string },
  app: Pick<AppRow, 'id' | 'name'>,
  deploy: Pick<DeployRow, 'id' | 'imageRef'>,
  env: Record<string, string>,
): ContainerSpec {
  return {
    name: containerName(settings.instance, app.name, deploy.id),
    image: deploy.imageRef!,
    env,
    network: settings.network,
    init: true,
    labels: {
      [LABELS.managed]: 'true',
      [LABELS.instance]: settings.instance,
      [LABELS.app]: app.name,
      [LABELS.appId]: String(app.id),
      [LABELS.deploy]: String(deploy.id),
      [LABELS.role]: 'app',
    },
  };
}
