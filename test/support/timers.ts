// Finds loops that run beside the work queue: every `setInterval(`, and every `setTimeout(f, ...)` (also
// `clock.setTimeout`) that schedules the function it is written in, directly or through one helper it
// calls (`function tick() { ...; schedule(ms) }` with `schedule` doing `setTimeout(tick, ms)`). A timeout
// that bounds one wait (`new Promise((r) => setTimeout(r, ms))`, an abort after `ms`) is not a loop.
// Text-based on purpose (comments are skipped, strings are not parsed): the layout test's fixtures show
// what it catches; it can be pointed at any tree.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { sourceFiles } from './layout.js';

export interface TimerLoop {
  /** Relative to the source directory. */
  file: string;
  line: number;
  kind: 'setInterval' | 'setTimeout loop';
}

/** The text with comments blanked out (same length, so offsets and line numbers hold). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '));
}

/** Index of the `}` closing the `{` at `open` (strings are not parsed: good enough for our sources). */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return text.length;
}

/** Named functions and their body ranges: `function f(`, `const f = (...) => {`, `f = () => {`, methods `f() {`. */
function functionBodies(text: string): { name: string; start: number; end: number }[] {
  const out: { name: string; start: number; end: number }[] = [];
  const defs = /(?:\bfunction\s+([A-Za-z_$][\w$]*)\s*\([^)]*\)[^{]*|\b([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]*)?=>\s*)\{/g;
  for (const m of text.matchAll(defs)) {
    const open = m.index + m[0].length - 1;
    out.push({ name: m[1] ?? m[2], start: open, end: closing(text, open) });
  }
  return out;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** The loops in one file's text. */
export function loopsIn(file: string, source: string): TimerLoop[] {
  const text = withoutComments(source);
  const found: TimerLoop[] = [];
  for (const m of text.matchAll(/\bsetInterval\s*\(/g)) found.push({ file, line: lineOf(text, m.index), kind: 'setInterval' });
  const bodies = functionBodies(text);
  for (const m of text.matchAll(/\bsetTimeout\s*\(\s*([A-Za-z_$][\w$]*)\s*[,)]/g)) {
    const target = m[1];
    const enclosing = bodies.filter((b) => b.start < m.index && m.index < b.end);
    const own = bodies.filter((b) => b.name === target);
    const direct = enclosing.some((b) => b.name === target);
    const viaHelper = own.some((b) => enclosing.some((e) => new RegExp(`\\b${e.name.replace(/\$/g, '\\$')}\\s*\\(`).test(text.slice(b.start, b.end))));
    if (direct || viaHelper) found.push({ file, line: lineOf(text, m.index), kind: 'setTimeout loop' });
  }
  return found;
}

/** Every loop under `src`. */
export function timerLoops(src: string): TimerLoop[] {
  return sourceFiles(src).flatMap((p) => loopsIn(relative(src, p), readFileSync(p, 'utf8')));
}
