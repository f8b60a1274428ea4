// Reads the relative imports of every .ts/.tsx file under a source directory and reduces them to a graph
// of top-level parts: a folder (`api`, `store`, ...) or a file directly in src (`main.ts`). The layout test
// checks that graph; kept apart so it can be pointed at any tree (an older checkout, a fixture).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface ImportEdge {
  /** Top-level parts, e.g. `ui` -> `api`. */
  from: string;
  to: string;
  /** The importing file and the specifier, relative to the source directory. */
  file: string;
  specifier: string;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g;

/** Every TypeScript source file below `dir` (no declaration files); the layout checkers all read these. */
export function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** A file's top-level part: its first path segment below `src`, with `.js` written as the `.ts` it is. */
const partOf = (src: string, path: string) => relative(src, path).split('/')[0].replace(/\.js$/, '.ts');

/** Every import that crosses from one top-level part to another. */
export function crossImports(src: string): ImportEdge[] {
  const root = resolve(src);
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(root)) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const from = partOf(root, file);
      const to = partOf(root, resolve(dirname(file), m[1]));
      if (from !== to) edges.push({ from, to, file: relative(root, file), specifier: m[1] });
    }
  }
  return edges;
}

/** The groups of parts that import each other in a circle (strongly connected components of size > 1). */
export function cycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
    if (!next.has(e.to)) next.set(e.to, new Set());
  }
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}
