// Memory of the engine's `kill` events for app containers: a container being stopped (docker kill, docker
// stop, rm -f) leaves the DNS answer at the `kill` event instead of at `die`. The engine sends `die` only
// after it has torn the container's network down (tens to hundreds of ms, more under load), and every
// request the proxy sends the dying address meanwhile fails (a 502 for a POST on Caddy 2.6.2, which cannot
// resend a body). Lost on restart, which only means the slower `die` path.
import type { RuntimeEvent } from '../../runtime/runtime.js';

/** Signals that end a container unless it handles them: KILL, TERM, INT, QUIT (by number or name). */
const STOPPING = new Set(['9', '15', '2', '3', 'SIGKILL', 'SIGTERM', 'SIGINT', 'SIGQUIT', 'KILL', 'TERM', 'INT', 'QUIT']);
/** A note older than this is forgotten: a container that outlived a TERM this long handled it. */
export const KILL_NOTE_MS = 15_000;
const MAX_NOTES = 10_000;

export interface KillNotes {
  /** Feeds one engine event (only stopping `kill`s of app containers are kept). */
  note(ev: RuntimeEvent): void;
  /** Whether `name`, started at `startedAtMs`, was sent a stopping signal since (and lately). */
  dying(name: string, startedAtMs: number | undefined): boolean;
  /**
   * The containers of `app` sent a stopping signal since the last call, each returned once: the app's next
   * pass takes its live one out of the answer before it asks the engine anything (an inspect of a dying
   * container waits for its exit: 200-450 ms under load, bench:heal).
   */
  takeFresh(app: string): string[];
}

export function createKillNotes(now: () => number): KillNotes {
  const notes = new Map<string, number>();
  const fresh = new Map<string, Set<string>>();
  return {
    note(ev) {
      if (ev.action !== 'kill' || !ev.name || !ev.labels['svc.app']) return;
      if (ev.signal !== undefined && !STOPPING.has(ev.signal)) return;
      if (notes.size >= MAX_NOTES) for (const [k, at] of notes) if (now() - at > KILL_NOTE_MS || notes.size >= MAX_NOTES) notes.delete(k);
      // The engine's time when it has one: a start after the kill (same clock) is then surely a new run,
      // even when the event reached us late.
      notes.set(ev.name, ev.atMs ?? now());
      const app = ev.labels['svc.app'];
      if (fresh.size < MAX_NOTES || fresh.has(app)) fresh.set(app, (fresh.get(app) ?? new Set()).add(ev.name));
    },
    takeFresh(app) {
      const names = fresh.get(app);
      if (!names) return [];
      fresh.delete(app);
      return [...names];
    },
    dying(name, startedAtMs) {
      const at = notes.get(name);
      if (at === undefined) return false;
      if (now() - at > KILL_NOTE_MS) {
        notes.delete(name);
        return false;
      }
      // A start after the kill is a new run.
      return startedAtMs === undefined || at >= startedAtMs;
    },
  };
}
