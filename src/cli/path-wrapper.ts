// `svc uninstall`'s half of the `svc` wrapper on the PATH: scripts/cli-wrapper.sh writes it at `npm start`
// and is the one place that knows its text and marker; this runs its `remove` (only our wrapper for this
// checkout is deleted, in SVC_BIN_DIR, default /usr/local/bin). Arguments as an array, no shell string.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The checkout this CLI runs from (src/cli/ or dist/cli/ are two levels below it). */
const checkout = fileURLToPath(new URL('../../', import.meta.url));

/** Removes the wrapper when it is ours for this checkout; the line to print, or undefined when there was none. */
export function removePathWrapper(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const script = `${checkout}scripts/cli-wrapper.sh`;
  if (!existsSync(script)) return undefined;
  const out = execFileSync('bash', [script, 'remove'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  return out ? `${out} (the svc command on the PATH)` : undefined;
}
