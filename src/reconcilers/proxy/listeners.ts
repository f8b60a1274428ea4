// Pure: which port listeners the proxy reconciler leaves out of the config, so that one app on a port
// another process holds never blocks every other route. Caddy loads a config whole: one listener that
// cannot bind rejects the load, and (2.6.2, measured) each rejected load also leaks the listening sockets
// it had already opened, which keep answering with the old routes until Caddy stops. So a port is left
// out BEFORE loading when the host shows it taken by someone else (not held by the proxy itself), and
// after a rejected load only as the last resort (a race). A left-out listener is tried again with backoff.
import type { Route } from '../../proxy/proxy.js';

/** A listener left out: its app, the error shown as the app's `route_error`, when to look again. */
export interface Blocked {
  app: string;
  error: string;
  /** Looks in a row that found the port still taken. */
  failures: number;
  retryAt: number;
}

/**
 * First retry after 1 s, doubling up to 10 s: a freed port serves again within ~10 s. Up to 5 min when the
 * host's ports cannot be read (a Caddy elsewhere): then every retry of a still taken port is a rejected
 * load, and each one leaks sockets in Caddy.
 */
export const BLOCKED_CAP_MS = 10_000;
export const BLIND_CAP_MS = 300_000;
export const blockedBackoffMs = (failures: number, capMs = BLOCKED_CAP_MS): number => Math.min(1000 * 2 ** Math.max(0, Math.min(failures, 30) - 1), capMs);

export const takenMessage = (port: number) =>
  `port ${port} is already in use by another process on this host, so the proxy cannot listen on it; ` +
  `stop what listens there or pick another port (svc tries again by itself)`;

export const rejectedMessage = (port: number, detail: string) =>
  `the proxy could not listen on port ${port} (${detail.slice(0, 300)}); svc tries again by itself`;

/**
 * The listeners to leave out of this load, port -> { app, error }. A blocked port whose retry is not due
 * stays out without a look; otherwise a port the proxy does not hold and `busy` (the host's listening
 * ports; undefined: cannot tell) shows taken is left out.
 */
export function listenersToLeaveOut(
  routes: Route[],
  o: { held: ReadonlySet<number>; busy: ReadonlySet<number> | undefined; blocked: ReadonlyMap<number, Blocked>; now: number },
): Map<number, { app: string; error: string }> {
  const out = new Map<number, { app: string; error: string }>();
  for (const r of routes) {
    if (r.mode !== 'port' || !r.port) continue;
    const b = o.blocked.get(r.port);
    if (b && b.app === r.app && b.retryAt > o.now) out.set(r.port, { app: r.app, error: b.error });
    else if (!o.held.has(r.port) && o.busy?.has(r.port)) out.set(r.port, { app: r.app, error: takenMessage(r.port) });
  }
  return out;
}

/** The routes without the listeners left out (domain routes always stay). */
export const withoutListeners = (routes: Route[], ports: { has(port: number): boolean }): Route[] => {
  const kept = routes.filter((r) => !(r.mode === 'port' && r.port && ports.has(r.port)));
  // The same array when nothing is left out: the proxy caches the config it built for it by identity.
  return kept.length === routes.length ? routes : kept;
};

/** Ports blocked and not yet due for a look at `now` (the cheap path leaves exactly these out). */
export const blockedNotDue = (blocked: ReadonlyMap<number, Blocked>, now: number): Set<number> =>
  new Set([...blocked].filter(([, b]) => b.retryAt > now).map(([p]) => p));

/**
 * Whether the blocked set needs a full pass now: a retry is due, or a blocked listener is no longer wanted
 * (its app deleted or moved), so its error must be cleared.
 */
export function blockedNeedsLook(blocked: ReadonlyMap<number, Blocked>, routes: Route[], now: number): boolean {
  for (const [port, b] of blocked) {
    if (b.retryAt <= now) return true;
    if (!routes.some((r) => r.mode === 'port' && r.port === port && r.app === b.app)) return true;
  }
  return false;
}

/** The blocked set after a load that left `leftOut` out: a port seen taken again backs off further; others go. */
export function nextBlocked(
  prev: ReadonlyMap<number, Blocked>,
  leftOut: ReadonlyMap<number, { app: string; error: string }>,
  now: number,
  capMs = BLOCKED_CAP_MS,
): Map<number, Blocked> {
  const next = new Map<number, Blocked>();
  for (const [port, l] of leftOut) {
    const b = prev.get(port);
    if (b && b.app === l.app && b.retryAt > now) next.set(port, b);
    else {
      const failures = b && b.app === l.app ? b.failures + 1 : 1;
      next.set(port, { app: l.app, error: l.error, failures, retryAt: now + blockedBackoffMs(failures, capMs) });
    }
  }
  return next;
}

/** The earliest retry among the blocked listeners (undefined: none). */
export const nextRetryAt = (blocked: ReadonlyMap<number, Blocked>): number | undefined =>
  blocked.size === 0 ? undefined : Math.min(...[...blocked.values()].map((b) => b.retryAt));
