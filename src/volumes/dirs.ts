// The host side of volumes: make the directories a container mounts, move a purged app's aside, and
// remove what was moved aside. Only the app reconciler and the delete command call these.
import { mkdirSync, chmodSync, renameSync, readdirSync, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { appVolumesDir, trashDir, volumeDir } from './paths.js';

/**
 * Creates each volume's directory when missing (never touches an existing one, so a chown or chmod the
 * user made inside is kept). Mode 0777: the container's user may not be root; the data directory itself
 * is mode 700, so no other host user reaches it.
 */
export function ensureVolumeDirs(dataDir: string, app: string, names: string[]): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const name of names) {
    const dir = volumeDir(dataDir, app, name);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o777);
    }
    dirs.set(name, dir);
  }
  return dirs;
}

/**
 * `DELETE ?purge=true`: moves `volumes/<app>` into the trash at once (a rename, so a new app of the same
 * name starts empty even before the files are gone); `emptyTrash` removes it later. False when none.
 */
export function trashAppVolumes(dataDir: string, app: string, appId: number, nowMs: number): boolean {
  const dir = appVolumesDir(dataDir, app);
  if (!existsSync(dir)) return false;
  mkdirSync(trashDir(dataDir), { recursive: true });
  renameSync(dir, join(trashDir(dataDir), `${app}.${appId}.${nowMs}`));
  return true;
}

/** Removes everything moved to the trash; what fails is left for the next call. */
export async function emptyTrash(dataDir: string): Promise<number> {
  const root = trashDir(dataDir);
  let removed = 0;
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return 0;
  }
  for (const e of entries) {
    await rm(join(root, e), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
