// The timeline of one heal, from the daemon's own trace marks (src/trace.ts): when the engine's
// events reached svc, when the app's passes ran, every engine call they made, the create and start, the
// DNS sync; bench:heal prints it per removal and the p50/p95 of each step across removals.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { TRACE_CHANNEL, type TraceMark } from '../src/trace.js';
import { ms, pct } from './common.js';

export interface Recorder {
  marks: TraceMark[];
  stop(): void;
}

/** Records every mark the daemon (in this process) publishes until stop(). */
export function recordMarks(): Recorder {
  const marks: TraceMark[] = [];
  const onMark = (m: unknown) => void marks.push(m as TraceMark);
  subscribe(TRACE_CHANNEL, onMark);
  return { marks, stop: () => unsubscribe(TRACE_CHANNEL, onMark) };
}

/** Step times (ms after t0) of one heal; NaN when the step did not happen. */
export type Steps = Record<string, number>;

/**
 * Pure: the steps of the heal of `app` that began at `t0` (the kill or rm call) and was served at
 * `servedMs`, from the marks in between. Also the engine calls the app's passes made before the create
 * (what svc waited on), as "op x count, total ms".
 */
export function healSteps(marks: TraceMark[], app: string, t0: number, servedMs: number): { steps: Steps; before: string; passes: number } {
  const key = `app:${app}`;
  const inWin = marks.filter((m) => m.atMs >= t0 && m.atMs <= servedMs + 200);
  const first = (f: (m: TraceMark) => boolean) => inWin.find(f);
  const at = (m: TraceMark | undefined, end = false) => (m ? (end ? m.endMs ?? m.atMs : m.atMs) - t0 : NaN);
  const ev = (action: string) => first((m) => m.what === 'event' && m.subject === key && m.name === action);
  const create = first((m) => m.what === 'engine' && m.name.startsWith('create '));
  const start = first((m) => m.what === 'engine' && m.name.startsWith('start ') && m.atMs >= (create?.atMs ?? 0));
  const dns = first((m) => m.what === 'heal' && m.name === 'dns sync');
  const heal = [...inWin].reverse().find((m) => m.what === 'heal' && (m.name === 'recreate' || m.name === 'restart') && m.atMs <= (start?.atMs ?? Infinity));
  const passes = inWin.filter((m) => m.what === 'pass' && m.name === key);
  const healPass = passes.find((p) => heal && p.atMs <= heal.atMs && (p.endMs ?? Infinity) >= heal.atMs);
  // Engine calls svc made from the first event to the create (or start): what it did before the work itself.
  const until = (create ?? start)?.atMs ?? servedMs;
  const calls = inWin.filter((m) => m.what === 'engine' && m.atMs < until && !m.name.startsWith('create '));
  const byOp = new Map<string, { n: number; ms: number }>();
  for (const c of calls) {
    const op = c.name.split(' ')[0]!;
    const s = byOp.get(op) ?? { n: 0, ms: 0 };
    s.n++;
    s.ms += (c.endMs ?? c.atMs) - c.atMs;
    byOp.set(op, s);
  }
  const before = [...byOp].map(([op, s]) => `${op} x${s.n} ${Math.round(s.ms)} ms`).join(', ');
  return {
    steps: {
      kill_rx: at(ev('kill')),
      die_rx: at(ev('die')),
      destroy_rx: at(ev('destroy')),
      heal_pass_start: at(healPass),
      heal_begin: at(heal),
      create_begin: at(create),
      create_end: at(create, true),
      start_begin: at(start),
      start_end: at(start, true),
      dns_synced: at(dns, true),
      served: servedMs - t0,
    },
    before,
    passes: passes.length,
  };
}

/** One line per heal: each step's time after t0. */
export const stepLine = (s: Steps) =>
  Object.entries(s)
    .filter(([, v]) => Number.isFinite(v))
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(', ');

/** Markdown rows: p50 / p95 of each step across heals (ms after the kill or rm), and of the gaps svc owns. */
export function stepTable(all: Steps[], title: string): string[] {
  const rows: string[] = [];
  const keys = Object.keys(all[0] ?? {});
  const col = (k: string) => all.map((s) => s[k]!).filter(Number.isFinite);
  const fmt = (xs: number[]) => (xs.length ? `${ms(pct(xs, 50))} / ${ms(pct(xs, 95))} (${xs.length})` : '-');
  for (const k of keys) rows.push(`| ${title}: ${k} | ${fmt(col(k))} |`);
  const gap = (a: string, b: string) => all.map((s) => s[b]! - s[a]!).filter(Number.isFinite);
  const ready = (s: Steps) => (Number.isFinite(s.destroy_rx) ? s.destroy_rx! : s.die_rx!);
  rows.push(`| ${title}: svc's reaction, last event needed (destroy for rm -f, die for kill) -> create/start call | ${fmt(all.map((s) => (Number.isFinite(s.create_begin) ? s.create_begin! : s.start_begin!) - ready(s)).filter(Number.isFinite))} |`);
  rows.push(`| ${title}: engine create (create_begin -> create_end) | ${fmt(gap('create_begin', 'create_end'))} |`);
  rows.push(`| ${title}: start done -> DNS synced | ${fmt(gap('start_end', 'dns_synced'))} |`);
  rows.push(`| ${title}: start done -> first 200 through Caddy | ${fmt(gap('start_end', 'served'))} |`);
  return rows;
}
