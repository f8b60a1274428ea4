// Writes settings into the `.env` file svc reads at start (mode 600), keeping every other line as it was.
// Used by the manifest flow so the credentials it received survive a restart.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const quote = (v: string) => (/^[A-Za-z0-9_./:@+=-]*$/.test(v) ? v : JSON.stringify(v));

/** Sets `values` in the env file at `path` (replacing earlier lines of the same keys), atomically. */
export function updateEnvFile(path: string, values: Record<string, string>): void {
  const old = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const keys = new Set(Object.keys(values));
  const kept = old.split('\n').filter((line) => {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
    return !(m && keys.has(m[1]));
  });
  while (kept.length > 0 && kept[kept.length - 1].trim() === '') kept.pop();
  const added = Object.entries(values).map(([k, v]) => `${k}=${quote(v)}`);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, [...kept, ...added].join('\n') + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Writes a file readable by its owner only, atomically. */
export function writePrivateFile(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
