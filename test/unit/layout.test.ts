// The layout of src/ (docs/architecture.md "The flow", docs/decisions/0001-one-write-path.md): entry points -> commands -> store -> queue -> reconcilers
// -> adapters, read from the real import statements. No two top-level folders import each other (directly
// or around a circle), only the composition root imports the REST adapters, and the lower layers never
// reach up to the edges.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crossImports, cycles, type ImportEdge } from '../support/layout.js';

const SRC = join(import.meta.dirname, '../../src');
/** The composition root: the only parts that may import api/ (and that nothing imports back). */
const ROOT = new Set(['main.ts', 'server.ts', 'wiring']);
/** Parts a lower layer must never import: it would make the edges or the reconcilers its dependency. */
const EDGES = ['api', 'ui', 'http', 'wiring', 'main.ts', 'server.ts', 'cli', 'cli.ts'];
const FORBIDDEN: Record<string, string[]> = {
  desired: [...EDGES, 'reconcilers', 'manifests', 'observed'],
  store: [...EDGES, 'desired', 'reconcilers', 'manifests', 'observed'],
  reconcilers: EDGES,
  observed: [...EDGES, 'desired'],
};

const show = (edges: ImportEdge[]) => edges.map((e) => `${e.file} imports ${e.specifier}`);

describe('layout of src/', () => {
  const edges = crossImports(SRC);

  it('has no cycle between top-level folders', () => {
    const found = cycles(edges);
    const culprits = found.flatMap((group) => show(edges.filter((e) => group.includes(e.from) && group.includes(e.to))));
    expect(culprits, `folder cycles: ${JSON.stringify(found)}`).toEqual([]);
  });

  it('imports api/ only from the composition root', () => {
    expect(show(edges.filter((e) => e.to === 'api' && !ROOT.has(e.from)))).toEqual([]);
  });

  it('keeps commands, store, observed state and reconcilers below the edges', () => {
    const wrong = edges.filter((e) => FORBIDDEN[e.from]?.includes(e.to));
    expect(show(wrong)).toEqual([]);
  });

  it('the checker sees a cycle and an api/ import where there is one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-layout-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('api/a.ts', "import { b } from '../ui/b.js';\nexport const a = 1;\n");
      file('ui/b.ts', "import type { a } from '../api/a.js';\nexport const b = 2;\n");
      file('store/c.ts', "export const c = await import('../desired/d.js');\n");
      file('desired/d.ts', "import { c } from '../store/c.js';\n");
      file('main.ts', "import { a } from './api/a.js';\n");
      const e = crossImports(dir);
      expect(cycles(e)).toEqual([['api', 'ui'], ['desired', 'store']]);
      expect(e.filter((x) => x.to === 'api' && !ROOT.has(x.from)).map((x) => x.file)).toEqual(['ui/b.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
