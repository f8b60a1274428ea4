// Self-healing: the live container of a successful deploy is not running (it died, was killed or
// removed). Start it again, or recreate it from that deploy's image and env snapshot, and count the
// attempt so a crash-looping app backs off like the kubelet instead of spinning the daemon.
import { eq } from 'drizzle-orm';
import type { Result } from '../../controller/types.js';
import { keyOf } from '../../controller/types.js';
import { appContainerSpec } from './container-spec.js';
import { addAppEvent, getDeploy } from '../../store/deploys.js';
import { apps, type AppRow } from '../../store/schema/index.js';
import type { AppReconcilerDeps } from './deps.js';
import { redact, restartBackoffMs } from '../restart.js';

export async function heal(deps: AppReconcilerDeps, app: AppRow, exists: boolean): Promise<Result> {
  const name = app.liveContainerName!;
  const failures = app.healFailures + 1;
  const notBefore = new Date(deps.now() + restartBackoffMs(failures)).toISOString();
  deps.db.update(apps).set({ healFailures: failures, healNotBefore: notBefore }).where(eq(apps.id, app.id)).run();
  try {
    if (exists) {
      await deps.runtime.start(name);
    } else {
      const deploy = getDeploy(deps.db, app.currentDeployId!);
      if (!deploy?.imageRef || !deploy.envSnapshotSealed) throw new Error(`deploy ${app.currentDeployId} has no image or env snapshot to recreate from`);
      await deps.runtime.run(appContainerSpec(deps.settings, app, deploy, deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed)));
    }
  } catch (err) {
    if (!(await deps.runtime.ping())) throw err; // engine down: back off and retry, nothing to record
    const message = redact(err instanceof Error ? err.message : String(err), deps.env.resolve(app.id).secrets);
    addAppEvent(deps.db, app.id, 'heal', `could not restart ${name}: ${message}`, 'error');
    return { requeueAfterMs: restartBackoffMs(failures) || 1_000 };
  }
  const info = await deps.runtime.inspect(name, deps.settings.network);
  deps.db.update(apps).set({ liveAddress: info?.address ?? null, liveContainerId: info?.id ?? null }).where(eq(apps.id, app.id)).run();
  await deps.dns.sync();
  deps.bus.emit('live', app.id);
  deps.enqueue(keyOf('proxy', 'main'));
  const how = exists ? 'restarted' : 'recreated';
  addAppEvent(deps.db, app.id, 'heal', `live container ${name} was not running; ${how} (attempt ${failures})`, 'warn');
  deps.log.warn('healed app container', { app: app.name, container: name, how, attempt: failures });
  return { requeueAfterMs: 0 };
}
