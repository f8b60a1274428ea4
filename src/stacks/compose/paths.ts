// A path the file names on the host side (a bind mount's source, an env_file, a build context) as a path
// relative to the repository's root, or undefined when it leaves it: absolute, `~`, or climbing out with `..`.
import { posix } from 'node:path';

export function insideStack(composeDir: string, path: string): string | undefined {
  if (path.startsWith('/') || path.startsWith('~') || /^[a-zA-Z]:[\\/]/.test(path) || path.includes('\\') || path.includes('\0')) return undefined;
  const joined = posix.normalize(posix.join(composeDir || '.', path));
  if (joined === '..' || joined.startsWith('../') || posix.isAbsolute(joined)) return undefined;
  return joined.replace(/\/$/, '') || '.';
}
