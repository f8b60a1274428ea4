// The manifest part of the composition root (src/wiring/ sits above every folder, beside main.ts): registers the manifests reconciler (directory and, when
// configured, git) and owns the directory watcher, which only enqueues `manifests:dir`.
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Manager } from '../controller/manager.js';
import { keyOf } from '../controller/types.js';
import type { Sealer } from '../crypto.js';
import type { Bus } from '../controller/bus.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { createManifestsReconciler } from '../reconcilers/manifests/reconciler.js';
import { checkGitSettings, syncGitCheckout, type GitSourceSettings } from '../manifests/git.js';
import { watchManifestDir, type DirWatcher } from '../manifests/watch.js';
import { existsSync } from 'node:fs';
import type { ComposeLoader } from '../desired/stacks.js';

export interface ManifestsWiring {
  /** Closes the directory watcher; call before stopping the manager. */
  stop(): Promise<void>;
}

export function wireManifests(d: { config: Config; db: Db; sealer: Sealer; log: Logger; manager: Manager; bus: Bus; loadCompose?: ComposeLoader }): ManifestsWiring {
  const { config, manager, log } = d;
  const m = config.manifests;
  let watcher: DirWatcher | undefined;
  let stopped = false;
  const ensureWatch = () => {
    if (watcher || stopped || !existsSync(m.dir)) return;
    watcher = watchManifestDir(m.dir, () => manager.enqueue(keyOf('manifests', 'dir')));
  };
  let git: GitSourceSettings | undefined;
  if (m.gitUrl) {
    git = { url: m.gitUrl, branch: m.gitBranch, path: m.gitPath, cloneDir: join(config.dataDir, 'manifests-git') };
    try {
      checkGitSettings(git);
    } catch (err) {
      log.error('manifest git source disabled', { error: err instanceof Error ? err.message : String(err) });
      git = undefined;
    }
  }
  const settings = git;
  manager.register(
    createManifestsReconciler({
      db: d.db,
      sealer: d.sealer,
      enqueue: manager.enqueue,
      bus: d.bus,
      config,
      log,
      now: () => new Date(),
      loadCompose: d.loadCompose,
      dir: m.dir,
      pruneServices: m.pruneServices,
      ensureWatch,
      git: settings && {
        location: `${settings.url}#${settings.branch}${settings.path ? `:${settings.path}` : ''}`,
        intervalMs: m.gitIntervalSeconds * 1000,
        sync: () => syncGitCheckout(settings),
      },
    }),
  );
  return {
    async stop() {
      stopped = true;
      await watcher?.close();
    },
  };
}
