// The one definition of an app container, shared by the deploy pipeline, scaling and self-healing so a
// healed or added replica is exactly what the deploy created.
import { LABELS, type ContainerSpec } from '../../runtime/runtime.js';
import type { AppRow, DeployRow } from '../../store/schema/index.js';
import { replicaName } from './plan.js';
import { parseVolumes } from '../../desired/workload-fields.js';
import { ensureVolumeDirs } from '../../volumes/dirs.js';
import { volumeDir } from '../../volumes/paths.js';

/** Label of an app container's replica slot (0 is the app's first replica, the one app_status records). */
export const SLOT_LABEL = 'svc.slot';

export function appContainerSpec(
  settings: { network: string; instance: string; dataDir: string },
  app: Pick<AppRow, 'id' | 'name' | 'memoryMb' | 'cpus' | 'volumes'>,
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
    // Every replica, old and new, mounts the same directories: blue/green shares them during the switch.
    mounts: volumeMounts(settings.dataDir, app),
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

/** The app's volumes as bind mounts (paths only; `ensureAppVolumes` makes the directories). */
export function volumeMounts(dataDir: string, app: Pick<AppRow, 'name' | 'volumes'>) {
  return parseVolumes(app.volumes).map((v) => ({ source: volumeDir(dataDir, app.name, v.name), target: v.mount_path }));
}

/**
 * Makes the app's volume directories (mode 0777, kept when they exist) before a container that mounts them
 * is created: the engine would make a missing one root-owned, unwritable for a non-root app.
 */
export function ensureAppVolumes(settings: { dataDir: string }, app: Pick<AppRow, 'name' | 'volumes'>): void {
  ensureVolumeDirs(settings.dataDir, app.name, parseVolumes(app.volumes).map((v) => v.name));
}
