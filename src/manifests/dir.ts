// Reads the manifest files of a directory (the watched directory, or a git checkout's path): every
// `*.yaml` / `*.yml` below it, dot files and dot directories skipped, in a stable order, names relative to
// the directory. A file that cannot be read is an error of that file, never of the others.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { MAX_FILE_BYTES, type ManifestError } from './parse.js';

export interface DirFiles {
  files: { file: string; text: string }[];
  errors: ManifestError[];
  /** False when the directory itself is missing: the source is unreadable and nothing may be pruned. */
  exists: boolean;
}

export const isManifestFile = (name: string) => /\.ya?ml$/i.test(name) && !name.startsWith('.');

export function readManifestDir(dir: string): DirFiles {
  const out: DirFiles = { files: [], errors: [], exists: existsSync(dir) && statSync(dir).isDirectory() };
  if (!out.exists) return out;
  const walk = (d: string, depth: number) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith('.')) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory() && depth < 8) walk(path, depth + 1);
      if (!entry.isFile() || !isManifestFile(entry.name)) continue;
      const file = relative(dir, path).split(sep).join('/');
      try {
        if (statSync(path).size > MAX_FILE_BYTES) throw new Error(`file is larger than ${MAX_FILE_BYTES} bytes`);
        out.files.push({ file, text: readFileSync(path, 'utf8') });
      } catch (err) {
        out.errors.push({ file, document: -1, path: '', message: err instanceof Error ? err.message : String(err) });
      }
    }
  };
  walk(dir, 0);
  return out;
}
