// The proxy reconciler's pass runs every second and asked Caddy each time whether it still serves the wanted
// config (one admin GET): that GET was the only thing an idle daemon sent anywhere every second. When svc
// runs Caddy itself (host or container mode), what can take the config away is known without asking:
// Caddy exits or restarts (the host Caddy's pid changes; the proxy container has engine events). So a
// `true` answer is trusted while the routes are the same array, the Caddy process is the same, and for at
// most `trustMs` (a safety look for what svc cannot see, e.g. someone posting a config to the admin API).
// In external mode svc does not own the process and the proxy is not wrapped: it is asked every pass.
import { LABELS, type RuntimeEvent } from '../runtime/runtime.js';
import { hostCaddyPid } from './host.js';
import type { Proxy, Route } from './proxy.js';

/** How long a `serves` answer is trusted while nothing says Caddy changed: the slow safety look. */
export const PROXY_TRUST_MS = 30_000;

/**
 * `proxy` whose `serves` answer is reused while `identity()` (which Caddy process runs) and the routes
 * (by identity: the reconciler hands the same array while the database is unchanged) stay the same,
 * for at most `trustMs`. Only a `true` answer is kept; `apply` forgets it.
 */
export function trustedProxy(proxy: Proxy, o: { identity: () => string; trustMs?: number; now?: () => number }): Proxy {
  const trustMs = o.trustMs ?? PROXY_TRUST_MS;
  const now = o.now ?? Date.now;
  let trusted: { routes: Route[]; identity: string; until: number } | undefined;
  return {
    async serves(routes) {
      const identity = o.identity();
      const t = now();
      if (trusted && trusted.routes === routes && trusted.identity === identity && t < trusted.until) return true;
      trusted = undefined;
      const ok = await proxy.serves(routes);
      // The identity read before asking: a restart during the GET shows as a change at the next pass.
      if (ok) trusted = { routes, identity, until: t + trustMs };
      return ok;
    },
    apply(routes) {
      trusted = undefined;
      return proxy.apply(routes);
    },
    heldPorts: proxy.heldPorts && (() => proxy.heldPorts!()),
    upstreamRequests: () => proxy.upstreamRequests(),
  };
}

/**
 * Which Caddy svc runs, told apart without asking it: the host Caddy's pid (pid file checked against
 * /proc: a few small reads), and a count of this instance's proxy container events (start, die, ...,
 * any action: one too many only costs a GET) that `note` is given. Either changes when Caddy exited or was started again.
 */
export function caddyIdentity(o: { dataDir: string; instance: string }): { identity: () => string; note: (ev: RuntimeEvent) => void } {
  let containerEvents = 0;
  return {
    identity: () => `${hostCaddyPid(o.dataDir) ?? 'none'}/${containerEvents}`,
    note(ev) {
      const labels = ev.labels ?? {};
      if (labels[LABELS.role] === 'proxy' && labels[LABELS.instance] === o.instance) containerEvents++;
    },
  };
}
