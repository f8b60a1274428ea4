// Which Caddy svc runs, and keeping it running: the proxy reconciler's `ensureProxyRunning`. Mode `auto`
// (the default) decides once per daemon start and says why in the log: `container` when the proxy image
// is present or can be pulled, else `host` (Debian's caddy, detached). What this data directory already
// runs wins over both (a running host Caddy or an existing proxy container), so a daemon restart never
// starts a second Caddy on the same ports. `external` runs nothing.
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { ensureProxyContainer, proxyContainerName } from './container.js';
import { ensureHostCaddy, hostCaddyPid } from './host.js';

export type ProxyMode = 'auto' | 'container' | 'host' | 'external';

export interface ProxyRunnerOptions {
  mode: ProxyMode;
  runtime: Runtime;
  image: string;
  adminUrl: string;
  dataDir: string;
  instance: string;
  log: Logger;
  waitReady: (timeoutMs: number) => Promise<boolean>;
}

/** The auto decision: the mode and the reason logged with it. Throws while the engine cannot be asked. */
export async function chooseProxyMode(o: ProxyRunnerOptions): Promise<{ mode: 'container' | 'host'; reason: string }> {
  if (hostCaddyPid(o.dataDir)) return { mode: 'host', reason: 'the host Caddy this data directory started is running' };
  if (await o.runtime.inspect(proxyContainerName(o.instance))) return { mode: 'container', reason: `the proxy container ${proxyContainerName(o.instance)} exists` };
  if (await o.runtime.hasImage(o.image)) return { mode: 'container', reason: `the proxy image ${o.image} is present` };
  try {
    o.log.info('pulling the proxy image', { image: o.image });
    await o.runtime.pull(o.image);
    return { mode: 'container', reason: `the proxy image ${o.image} was pulled` };
  } catch (err) {
    return { mode: 'host', reason: `the proxy image ${o.image} cannot be pulled (${(err as Error).message.slice(0, 300)})` };
  }
}

/** `ensureProxyRunning` for the proxy reconciler; undefined in external mode. */
export function createProxyRunner(o: ProxyRunnerOptions): (() => Promise<void>) | undefined {
  if (o.mode === 'external') return undefined;
  let chosen: 'container' | 'host' | undefined = o.mode === 'auto' ? undefined : o.mode;
  return async () => {
    if (!chosen) {
      const c = await chooseProxyMode(o);
      o.log.info('proxy mode chosen', { mode: c.mode, reason: c.reason, SVC_PROXY_MODE: 'auto' });
      chosen = c.mode;
    }
    if (chosen === 'host') {
      await ensureHostCaddy({ svcDataDir: o.dataDir, adminUrl: o.adminUrl, log: o.log, waitReady: o.waitReady });
      return;
    }
    await ensureProxyContainer({ runtime: o.runtime, image: o.image, adminUrl: o.adminUrl, dataDir: o.dataDir, instance: o.instance, log: o.log, waitReady: o.waitReady });
  };
}
