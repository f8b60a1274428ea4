#!/usr/bin/env node
// Before `npm start`: runs `npm run build` only when dist/ is older than its inputs (every file under src/,
// package-lock.json, tsconfig*.json), so a restart with unchanged sources does not wait for tsc. A
// successful build writes dist/.build-stamp; its mtime is when the inputs were last compiled.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// fileURLToPath, not import.meta.dirname: that needs Node 20.11 and package.json promises any Node 20.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');

/** Newest mtime (ms) of a file or of any file below a directory. */
function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted file changes its directory's mtime
  for (const e of readdirSync(path)) max = Math.max(max, newest(join(path, e)));
  return max;
}

const inputs = ['src', 'package-lock.json', ...readdirSync(root).filter((f) => /^tsconfig.*\.json$/.test(f))];
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = inputs.find((f) => newest(join(root, f)) > built);
if (built > 0 && !changed) {
  console.log('svc: sources unchanged since the last build; not rebuilding');
  process.exit(0);
}
const started = Date.now();
const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
// The stamp takes the time the build started: a file saved during the build makes the next start rebuild.
writeFileSync(stamp, '');
utimesSync(stamp, started / 1000, started / 1000);
