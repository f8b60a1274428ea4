// A change of an app's volumes takes effect only in new containers (a bind mount is fixed when a container
// is made), so the apps command rolls the app: a deploy of the live image, blue/green or stop_first as the
// app is set, recorded with the reason. The decisions are pure; `rollForVolumes` writes inside the apps
// command's transaction, so the new list and the roll commit together.
import { activeDeploy, addAppEvent, addDeployEvent, createDeploy, getDeploy } from '../store/deploys.js';
import type { AppView } from '../store/app-view.js';
import type { DeployRow } from '../store/schema/index.js';
import type { CommandCtx, Origin } from './context.js';
import { parseVolumes, type Volume } from './workload-fields.js';

/** The difference in words ("volume logs added at /var/log/app; ..."); undefined when the mounts are the same. */
export function volumeChange(before: Volume[], after: Volume[]): string | undefined {
  const was = new Map(before.map((v) => [v.name, v.mount_path]));
  const now = new Map(after.map((v) => [v.name, v.mount_path]));
  const out: string[] = [];
  for (const [name, path] of now) {
    const old = was.get(name);
    if (old === undefined) out.push(`volume ${name} added at ${path}`);
    else if (old !== path) out.push(`volume ${name} moved from ${old} to ${path}`);
  }
  for (const [name, path] of was) if (!now.has(name)) out.push(`volume ${name} (${path}) removed (its files are kept)`);
  return out.length > 0 ? out.join('; ') : undefined;
}

/** Pipeline steps before the new containers are made: a deploy still there will mount the new list itself. */
const BEFORE_CREATE = new Set(['validate', 'clone', 'build', 'pull']);

/**
 * Whether the running containers need a roll: only when something runs (a live deploy, replicas above 0)
 * and no deploy is queued or on its way to making containers (that one mounts the new list anyway).
 */
export function needsRoll(app: { liveDeployId: number | null; replicas: number }, active: { status: string; step: string | null } | undefined): boolean {
  if (app.liveDeployId === null || app.replicas === 0) return false;
  if (!active) return true;
  if (active.status === 'pending') return false;
  return !(active.status === 'running' && (active.step === null || BEFORE_CREATE.has(active.step)));
}

/**
 * Rolls `app` when its volumes change to `next.volumes` and running containers mount the old list:
 * a deploy (trigger `roll`) of the live deploy's image, with a deploy event and an app event that say why.
 * No roll for an app that runs nothing, or one whose queued deploy will make its containers anyway.
 */
export function rollForVolumes(ctx: CommandCtx, app: AppView, next: Pick<AppView, 'volumes' | 'replicas' | 'deployStrategy'>, origin: Origin): DeployRow | undefined {
  if (app.volumes === next.volumes) return undefined;
  const change = volumeChange(parseVolumes(app.volumes), parseVolumes(next.volumes));
  if (!change || !needsRoll({ liveDeployId: app.currentDeployId, replicas: next.replicas }, activeDeploy(ctx.db, app.id))) return undefined;
  const image = getDeploy(ctx.db, app.currentDeployId!)?.imageRef;
  if (!image) return undefined;
  // No bus inside the caller's transaction: nothing listens to a deploy that did not exist a moment ago.
  const deploy = createDeploy(ctx.db, ctx.enqueue, undefined, { appId: app.id, appName: app.name, imageRef: image, trigger: 'roll', origin });
  const why = `${change}: the running containers mount the old list, so the live image ${image} is deployed again (${next.deployStrategy})`;
  addDeployEvent(ctx.db, undefined, deploy.id, 'roll', why);
  addAppEvent(ctx.db, app.id, 'roll', `deploy #${deploy.id}: ${why}`);
  return deploy;
}
