// Watches the manifest directory with chokidar and, after a quiet period (debounce: a burst of saves, a
// `git checkout`, an editor's write-then-rename), enqueues `manifests:dir` once. The watcher only says
// "look again"; the reconciler reads and applies (DESIGN.md: events are hints, state is re-read).
import { watch, type FSWatcher } from 'chokidar';
import { isManifestFile } from './dir.js';

export interface DirWatcher {
  close(): Promise<void>;
}

/** Whether a change at `path` can matter: YAML files and directories, never dot files, swap files or notes. */
export function isRelevantChange(dir: string, path: string): boolean {
  const base = path.split(/[\\/]/).pop() ?? '';
  if (path === dir) return true;
  if (base.startsWith('.')) return false;
  return isManifestFile(base) || !base.includes('.');
}

export function watchManifestDir(dir: string, onChange: () => void, debounceMs = 300): DirWatcher {
  let timer: NodeJS.Timeout | undefined;
  const kick = (path: string) => {
    if (!isRelevantChange(dir, path)) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, debounceMs);
  };
  const watcher: FSWatcher = watch(dir, {
    ignoreInitial: true,
    ignored: (path) => (path.split(/[\\/]/).pop() ?? '').startsWith('.'),
    depth: 8,
    // A file is reported only once its size has been stable this long (half-written files are not read).
    awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 25 },
  });
  watcher.on('all', (_event, path) => kick(path));
  watcher.on('error', () => kick(dir));
  return {
    async close() {
      if (timer) clearTimeout(timer);
      await watcher.close();
    },
  };
}
