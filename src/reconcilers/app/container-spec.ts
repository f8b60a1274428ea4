// The one definition of an app container, shared by the deploy pipeline, scaling and self-healing so a
// healed or added replica is exactly what the deploy created.
import { LABELS, type ContainerSpec } from '../../runtime/runtime.js';
import type { AppRow, DeployRow } from '../../store/schema/index.js';
import { replicaName } from './plan.js';
import { parseVolumes } from '../../desired/workload-fields.js';
import { ensureVolumeDirs } from '../../volumes/dirs.js';
import { volumeDir } from '../../volumes/paths.js';
import type { Sealer } from '../../crypto.js';
import { parseServiceSpec, STACK_LABEL, stackBindSource, stackNetworkName, stopGraceSecondsOf, type StackServiceSpec } from '../../stacks/service-spec.js';

/** The stack service definition a deploy runs (issue 32), or undefined for an app of its own. */
export const stackSpecOf = (sealer: Sealer, deploy: Pick<DeployRow, 'stackService'>): StackServiceSpec | undefined =>
  deploy.stackService ? parseServiceSpec(sealer.open(deploy.stackService)) : undefined;

/** Label of an app container's replica slot (0 is the app's first replica, the one app_status records). */
export const SLOT_LABEL = 'svc.slot';

export function appContainerSpec(
  settings: { network: string; instance: string; dataDir: string },
  app: Pick<AppRow, 'id' | 'name' | 'memoryMb' | 'cpus' | 'volumes'>,
  deploy: Pick<DeployRow, 'id' | 'imageRef'>,
  env: Record<string, string>,
  slot = 0,
  stack?: StackServiceSpec,
): ContainerSpec {
  const base: ContainerSpec = {
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
  return stack ? withStackService(settings, base, stack) : base;
}

/**
 * A stack service's container: its Compose fields over the app's (svc's labels win over the file's), its
 * stack's networks with its Compose name as alias, its named volumes and bind mounts, the limits of the
 * definition it runs (a rollback runs the old ones).
 */
function withStackService(settings: { network: string; dataDir: string }, base: ContainerSpec, spec: StackServiceSpec): ContainerSpec {
  const s = spec.service;
  const hc = s.healthcheck;
  return {
    ...base,
    cmd: s.command,
    entrypoint: s.entrypoint,
    user: s.user,
    workingDir: s.workingDir,
    labels: { ...s.labels, ...base.labels, [STACK_LABEL]: spec.stack },
    tmpfs: s.tmpfs,
    healthcheck: hc === undefined ? undefined : hc.kind === 'disabled' ? 'disabled' : { test: hc.test, intervalMs: hc.intervalMs, timeoutMs: hc.timeoutMs, retries: hc.retries, startPeriodMs: hc.startPeriodMs },
    ...stackAttachments(settings, spec, base.mounts ?? []),
    resources: { memoryMb: s.limits.memoryBytes === undefined ? null : Math.max(6, Math.round(s.limits.memoryBytes / (1024 * 1024))), cpus: s.limits.cpus ?? null },
  };
}

/**
 * What joins a container to its stack: the stack's networks (its Compose name as alias) and its named volumes
 * and bind mounts, after `mounts`. A stack service's job runs with the same, so it reaches `db` as the service does.
 */
export function stackAttachments(settings: { network: string; dataDir: string }, spec: StackServiceSpec, mounts: NonNullable<ContainerSpec['mounts']>): Pick<ContainerSpec, 'extraNetworks' | 'mounts'> {
  const s = spec.service;
  return {
    extraNetworks: s.networks.map((n) => ({ name: stackNetworkName(settings.network, spec.stack, n), aliases: [s.name] })),
    mounts: [
      ...mounts,
      ...s.volumes.map((v) =>
        v.kind === 'named'
          ? { source: volumeDir(settings.dataDir, spec.stack, v.volume), target: v.target, readOnly: v.readOnly }
          : { source: stackBindSource(settings.dataDir, spec.stack, v.source), target: v.target, readOnly: v.readOnly },
      ),
    ],
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
export function ensureAppVolumes(settings: { dataDir: string }, app: Pick<AppRow, 'name' | 'volumes'>, stack?: StackServiceSpec): void {
  ensureVolumeDirs(settings.dataDir, app.name, parseVolumes(app.volumes).map((v) => v.name));
  // A stack's named volumes are the stack's (volumes/<stack>/<volume>), shared by the services that mount them.
  if (stack) ensureVolumeDirs(settings.dataDir, stack.stack, stack.service.volumes.flatMap((v) => (v.kind === 'named' ? [v.volume] : [])));
}

/** The grace from SIGTERM to SIGKILL when svc stops one of the app's containers: a stack service's `stop_grace_period`, else svc's. */
export const graceOf = (deps: { sealer: Sealer; settings: { stopGraceSeconds: number } }, app: Partial<Pick<AppRow, 'stackService'>>): number =>
  stopGraceSecondsOf(app.stackService ? parseServiceSpec(deps.sealer.open(app.stackService))?.service : undefined, deps.settings.stopGraceSeconds);
