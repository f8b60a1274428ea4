// The one warning both Caddy proxies give about routes they leave out; kept apart from config.ts, which
// stays pure.
import type { Logger } from '../log.js';
import { partitionRoutes, type CaddyConfigOptions } from './config.js';
import type { Route } from './proxy.js';

/**
 * Logs the routes left out of the config (two apps on one domain or port, a port svc uses), once per
 * distinct set: every apply would otherwise repeat the same warning each second. Both proxies use it.
 */
export function conflictReporter(opts: Pick<CaddyConfigOptions, 'httpPort' | 'httpsPort' | 'adminUrl'>, log: Logger) {
  let reported = '';
  return (routes: Route[]): void => {
    const { conflicts } = partitionRoutes(routes, opts);
    const key = JSON.stringify(conflicts);
    if (key === reported) return;
    for (const c of conflicts) log.warn('route left out of the proxy config', { app: c.app, reason: c.reason });
    reported = key;
  };
}
