// The proxy reconciler (key `proxy:main`): makes the reverse proxy serve exactly the routes of the apps
// in the database, with its DNS responder up and, in container mode, its container running. Route
// changes come from app create/update/delete only; deploys change DNS answers, never the proxy config.
import type { Reconciler, Result } from '../../controller/types.js';
import type { Logger } from '../../log.js';
import type { Proxy } from '../../proxy/proxy.js';
import type { Db } from '../../store/db.js';
import { apps } from '../../store/schema/index.js';
import type { DnsSync } from './dns-sync.js';
import { desiredRoutes } from './routes.js';

export interface ProxyReconcilerDeps {
  db: Db;
  proxy: Proxy;
  dns: DnsSync;
  /** Starts the DNS responder process when nothing answers on its port. */
  ensureDnsResponder: () => Promise<void>;
  /** Container mode: makes sure the proxy container runs (external mode: undefined). */
  ensureProxyContainer?: () => Promise<void>;
  log: Logger;
}

export function createProxyReconciler(deps: ProxyReconcilerDeps): Reconciler {
  return {
    kind: 'proxy',
    listNames: () => ['main'],
    async reconcile(): Promise<Result> {
      await deps.ensureDnsResponder();
      await deps.dns.sync();
      await deps.ensureProxyContainer?.();
      const rows = deps.db.select().from(apps).all();
      await deps.proxy.apply(desiredRoutes(rows));
      return {};
    },
  };
}
