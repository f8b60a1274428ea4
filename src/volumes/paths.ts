// Where an app's persistent volumes live on the host: `SVC_DATA_DIR/volumes/<app>/<volume>` (issue 22).
// Both names are validated by nameSchema before they get here (lowercase letters, digits and -), so a
// path built from them never leaves the volumes directory; `volumeDir` checks that again anyway.
import { join, resolve, sep } from 'node:path';

export const VOLUMES_DIR = 'volumes';
/** Purged apps' volumes wait here (renamed at delete time) until the app reconciler removes them. */
export const TRASH_DIR = '.trash';
const NAME = /^[a-z][a-z0-9-]{0,62}$/;

export const volumesRoot = (dataDir: string) => resolve(dataDir, VOLUMES_DIR);

export function appVolumesDir(dataDir: string, app: string): string {
  if (!NAME.test(app)) throw new Error(`refusing a volume path for app name ${JSON.stringify(app)}`);
  return join(volumesRoot(dataDir), app);
}

export function volumeDir(dataDir: string, app: string, volume: string): string {
  if (!NAME.test(volume)) throw new Error(`refusing a volume path for volume name ${JSON.stringify(volume)}`);
  const dir = join(appVolumesDir(dataDir, app), volume);
  if (!dir.startsWith(volumesRoot(dataDir) + sep)) throw new Error(`refusing volume path ${dir}: not under ${volumesRoot(dataDir)}`);
  return dir;
}

export const trashDir = (dataDir: string) => join(volumesRoot(dataDir), TRASH_DIR);
