// The Proxy port over a Caddy svc shares (SVC_PROXY_MODE=external, API.md "Configuration"): svc writes
// only its own servers and TLS policy (shared-plan.ts), one scoped admin request at a time and only when
// they differ from what Caddy has, so an operator's sites and another instance's routes keep serving.
// `serves` asks Caddy for its config and checks svc's part, so a restarted or emptied Caddy is noticed.
import type { Logger } from '../log.js';
import { createAdmin, heldPorts, ProxyLoadError, rejection, upstreamRequests } from './admin.js';
import { createCaddyWatch, type CaddyWatch } from './caddy-version.js';
import { buildServers, tlsLogConfig, type CaddyConfigOptions } from './config.js';
import { conflictReporter } from './conflict-log.js';
import type { Proxy, Route } from './proxy.js';
import { nextSharedWrite, sharedNames, sharedTlsPolicy, type SharedWanted } from './shared-plan.js';

export interface SharedCaddyOptions extends CaddyConfigOptions {
  /** config.instance: names svc's servers in the shared config. */
  instance: string;
  log: Logger;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Which Caddy answers (default: the local process's `caddy version`, caddy-version.ts). */
  watch?: CaddyWatch;
}

/** Bound on writes per apply: each converges one path, so a few per server is already generous. */
const MAX_WRITES = 200;

export function createSharedCaddyProxy(opts: SharedCaddyOptions): Proxy {
  const { admin } = createAdmin(opts);
  const names = sharedNames(opts.instance);
  let chain: Promise<void> = Promise.resolve();
  const reportConflicts = conflictReporter(opts, opts.log);
  const watch = opts.watch ?? createCaddyWatch(opts.adminUrl, opts.log);

  const wantedFor = (routes: Route[]): SharedWanted => {
    const { servers, domains } = buildServers(routes, { ...opts, features: watch.known() }, names);
    return {
      servers,
      tls: sharedTlsPolicy(domains, opts, names.tlsId),
      internalCa: opts.tlsIssuer === 'internal',
      ...(opts.tlsLog ? { tlsLog: tlsLogConfig(opts.tlsLog.caddyPath) } : {}),
    };
  };

  const currentText = async (): Promise<string> => {
    const res = await admin('GET', '/config/');
    if (!res.ok) throw new ProxyLoadError(`Caddy answered HTTP ${res.status} to GET /config/`);
    return res.text();
  };
  const parsed = (text: string): unknown => (text.trim() ? JSON.parse(text) : null);
  const current = async (): Promise<unknown> => parsed(await currentText());
  // What serves() last found right: the same routes (the reconciler hands the same array while the
  // database is unchanged) and Caddy answering the same bytes need no parse and compare again; that
  // compare, every second, was most of an idle daemon's CPU in this mode.
  let verified: { routes: Route[]; text: string } | undefined;

  const applyOnce = async (routes: Route[]) => {
    reportConflicts(routes);
    await watch.features();
    const wanted = wantedFor(routes);
    for (let writes = 0; ; writes++) {
      const write = nextSharedWrite(await current(), wanted, names);
      if (!write) {
        if (writes > 0) opts.log.info('proxy config updated (svc\'s own servers in a shared Caddy)', { routes: routes.length, writes });
        return;
      }
      if (writes >= MAX_WRITES) throw new ProxyLoadError(`svc's part of the shared Caddy config did not converge after ${MAX_WRITES} writes (last: ${write.method} ${write.path})`);
      const res = await admin(write.method, write.path, write.body === undefined ? undefined : JSON.stringify(write.body));
      if (!res.ok) {
        const detail = (await res.text()).trim();
        throw rejection(`Caddy rejected ${write.method} ${write.path} (HTTP ${res.status}): ${detail.slice(0, 2000)}`, detail);
      }
      await res.body?.cancel();
    }
  };

  return {
    apply(routes) {
      // Serialised: two reconciles must not interleave their look and write.
      const run = chain.then(() => applyOnce(routes));
      chain = run.catch(() => {});
      return run;
    },
    async serves(routes) {
      try {
        const text = await currentText();
        if (verified?.routes === routes && verified.text === text) return true;
        const ok = nextSharedWrite(parsed(text), wantedFor(routes), names) === undefined;
        verified = ok ? { routes, text } : undefined;
        return ok;
      } catch {
        verified = undefined;
        return false;
      }
    },
    upstreamRequests: () => upstreamRequests(admin),
    heldPorts: () => heldPorts(admin),
  };
}
