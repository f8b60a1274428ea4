// The layout of src/ (docs/architecture.md "The flow", docs/decisions/0001-one-write-path.md): entry points -> commands -> store -> queue -> reconcilers
// -> adapters, read from the real import statements. No two top-level folders import each other (directly
// or around a circle), only the composition root imports the REST adapters, and the lower layers never
// reach up to the edges.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crossImports, cycles, type ImportEdge } from '../support/layout.js';
import { loopsIn, timerLoops } from '../support/timers.js';

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

/**
 * Timers that may loop beside the work queue, each with why. Everything else that must come back later is a
 * key of the queue and returns `requeueAfterMs` (issue 31 "No loops beside the queue").
 */
const TIMER_LOOPS_ALLOWED: Record<string, string> = {
  'api/logs.ts': "a log stream's SSE keepalive: lives and ends with one response",
  'api/jobs.ts': "a job run's SSE keepalive: lives and ends with one response",
  'ui/assets/client.ts': "the page's auto-refresh: runs in the browser, not in the daemon",
  'metrics/collector.ts': 'the resource sampler (issue 22), on the Clock port; not yet a queue key (a follow-up)',
};
/** Folders whose timers are the machinery itself: the queue, the manager's resync, the event stream's reconnect. */
const TIMER_FOLDERS_ALLOWED = ['controller/'];

describe('no loops beside the queue', () => {
  it('has no setInterval or self-rescheduling setTimeout outside the queue and the listed files', () => {
    const loops = timerLoops(SRC).filter((l) => !TIMER_FOLDERS_ALLOWED.some((d) => l.file.startsWith(d)) && !(l.file in TIMER_LOOPS_ALLOWED));
    expect(loops.map((l) => `${l.file}:${l.line} ${l.kind}`)).toEqual([]);
  });

  it('lists no file that has no loop any more', () => {
    const files = new Set(timerLoops(SRC).map((l) => l.file));
    expect(Object.keys(TIMER_LOOPS_ALLOWED).filter((f) => !files.has(f))).toEqual([]);
  });

  it('the checker catches an interval and a timer that schedules itself, directly or through a helper; not a bounded wait', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-layout-timers-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('a/interval.ts', 'export function every() {\n  const t = setInterval(() => {}, 1000);\n  return t;\n}\n');
      file('b/self.ts', 'export const tick = () => {\n  work();\n  timer = clock.setTimeout(tick, 5000);\n};\n');
      file('c/helper.ts', 'function tick() {\n  schedule(250);\n}\nconst schedule = (ms: number) => {\n  timer = setTimeout(tick, ms);\n};\n');
      file('d/waits.ts', [
        '// setInterval(in a comment) is not code',
        'export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));',
        'export function bounded(abort: () => void) {',
        '  const t = setTimeout(abort, 2000);',
        '  return t;',
        '}',
        'function done() {}',
        'export const once = () => setTimeout(done, 10);',
        '',
      ].join('\n'));
      expect(timerLoops(dir).map((l) => `${l.file}:${l.line} ${l.kind}`).sort()).toEqual(['a/interval.ts:2 setInterval', 'b/self.ts:3 setTimeout loop', 'c/helper.ts:5 setTimeout loop']);
      expect(loopsIn('x.ts', 'const s = `setInterval`;')).toEqual([]); // a word, not a call
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
