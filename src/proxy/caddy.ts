// The Proxy port over Caddy's admin API. `apply` compares the generated config with what Caddy has
// (`GET /config/`) and posts `/load` only when they differ: a load closes idle client keep-alive
// connections, so an unchanged config must never be reloaded (not on a resync, not after a daemon
// restart). Asking Caddy each time, instead of remembering the last load, also re-applies the config
// after Caddy itself restarted with an empty or older one. `serves` is the cheap check the proxy
// reconciler makes every second: one tiny GET of the config's fingerprint id.
import type { Logger } from '../log.js';
import { createCaddyWatch, type CaddyFeatures, type CaddyWatch } from './caddy-version.js';
import { buildCaddyConfig, canonicalJson, fingerprintOf, type CaddyConfigOptions } from './config.js';
import { conflictReporter } from './conflict-log.js';
import type { Proxy, Route } from './proxy.js';
import { createAdmin, heldPorts, rejection, upstreamRequests } from './admin.js';

export { ProxyBindError, ProxyLoadError, ProxyUnreachableError } from './admin.js';

export interface CaddyProxyOptions extends CaddyConfigOptions {
  log: Logger;
  /** Injectable for tests (counting loads); default node:http (admin-http.ts). */
  fetch?: typeof fetch;
  /** Per admin request (default 30 s: a load may wait on listeners). */
  timeoutMs?: number;
  /** Which Caddy answers (default: the local process's `caddy version`, caddy-version.ts). */
  watch?: CaddyWatch;
}

export interface CaddyProxy extends Proxy {
  /** The config `apply(routes)` would load (for diagnostics). */
  configFor(routes: Route[]): unknown;
  /** One look, no wait: true when the admin API answers now (a reconciler's readiness check). */
  answers(): Promise<boolean>;
  /** For tools and tests (it polls): resolves when the admin API answers, false after `timeoutMs`. */
  waitReady(timeoutMs: number): Promise<boolean>;
}

export function createCaddyProxy(opts: CaddyProxyOptions): CaddyProxy {
  let chain: Promise<void> = Promise.resolve();
  const reportConflicts = conflictReporter(opts, opts.log);
  // The last routes built, with their config and its fingerprint id: serves() runs every second.
  // The same array (the reconciler's, while the database is unchanged) skips even the key's JSON.
  // Built for the features of the Caddy last seen answering (a replaced Caddy of another version is
  // noticed at the next apply: its config has another fingerprint, so serves() says no first).
  const watch = opts.watch ?? createCaddyWatch(opts.adminUrl, opts.log);
  let built: { routes: Route[]; features: CaddyFeatures; key: string; config: ReturnType<typeof buildCaddyConfig> } | undefined;
  const configOf = (routes: Route[]) => {
    const features = watch.known();
    if (built?.routes === routes && built.features === features) return built.config;
    const key = JSON.stringify([routes, features]);
    built = built?.key === key ? { ...built, routes, features } : { routes, features, key, config: buildCaddyConfig(routes, { ...opts, features }) };
    return built.config;
  };

  const { admin } = createAdmin(opts);

  const applyOnce = async (routes: Route[]) => {
    reportConflicts(routes);
    await watch.features();
    const wanted = configOf(routes);
    const text = JSON.stringify(wanted);
    const current = await admin('GET', '/config/');
    if (current.ok) {
      const raw = await current.text();
      let have: unknown = null;
      try {
        have = JSON.parse(raw);
      } catch {
        /* not JSON: treat as different */
      }
      if (canonicalJson(have) === text) return;
    } else {
      await current.body?.cancel();
    }
    const res = await admin('POST', '/load', text);
    if (!res.ok) {
      const detail = (await res.text()).trim();
      throw rejection(`Caddy rejected the config (HTTP ${res.status}): ${detail.slice(0, 2000)}`, detail);
    }
    await res.body?.cancel();
    opts.log.info('proxy config loaded', { routes: routes.length });
  };

  return {
    apply(routes) {
      // Serialised: two reconciles must not interleave their compare and load.
      const run = chain.then(() => applyOnce(routes));
      chain = run.catch(() => {});
      return run;
    },
    upstreamRequests: () => upstreamRequests(admin),
    heldPorts: () => heldPorts(admin),
    async serves(routes) {
      const id = fingerprintOf(configOf(routes));
      try {
        const res = await admin('GET', `/id/${id}/http_port`, undefined, 2000);
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    },
    configFor: (routes) => buildCaddyConfig(routes, { ...opts, features: watch.known() }),
    async answers() {
      try {
        const res = await admin('GET', '/config/', undefined, 1000);
        await res.body?.cancel();
        return true;
      } catch {
        return false;
      }
    },
    async waitReady(ms) {
      const end = Date.now() + ms;
      for (;;) {
        try {
          const res = await admin('GET', '/config/', undefined, 1000);
          await res.body?.cancel();
          return true;
        } catch {
          if (Date.now() >= end) return false;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}
