// Which Caddy svc runs, and keeping it running: the proxy reconciler's `ensureProxyRunning`. Mode `auto`
// (the default) decides once per daemon start and says why in the log: `container` when the proxy image
// is present or can be pulled, else `host` (Debian's caddy, detached). What this data directory already
// runs wins over both (a running host Caddy or an existing proxy container), so a daemon restart never
// starts a second Caddy on the same ports. `external` runs nothing. Nothing here waits for Caddy: after
// a start the runner answers `starting` and the reconciler comes back shortly, until the admin API
// answers or READY_TIMEOUT_MS has passed (then an error says why, and the next pass tries again).
import type { Logger } from '../log.js';
import type { Mount, Runtime } from '../runtime/runtime.js';
import { ensureProxyContainer, proxyContainerName } from './container.js';
import { ensureHostCaddy, hostCaddyLogTail, hostCaddyPid } from './host.js';
import { createTerminator } from './detached.js';

/** How long a started Caddy may take before its admin API answers. */
export const READY_TIMEOUT_MS = 15_000;

/** `running`: Caddy's admin API answers; `starting`: ask again shortly. */
export type ProxyRunState = 'running' | 'starting';

export type ProxyMode = 'auto' | 'container' | 'host' | 'external';

export interface ProxyRunnerOptions {
  mode: ProxyMode;
  runtime: Runtime;
  image: string;
  /** Host mode: the Caddy binary (SVC_PROXY_BIN; default /usr/bin/caddy). */
  bin?: string;
  adminUrl: string;
  dataDir: string;
  instance: string;
  log: Logger;
  /** One look: true when Caddy's admin API answers now (CaddyProxy.answers). */
  answers: () => Promise<boolean>;
  /** Default Date.now. */
  now?: () => number;
  /** Extra mounts of the proxy container (the Swarm edge relay's socket directory). */
  mounts?: Mount[];
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
export function createProxyRunner(o: ProxyRunnerOptions): (() => Promise<ProxyRunState>) | undefined {
  if (o.mode === 'external') return undefined;
  const now = o.now ?? Date.now;
  const terminator = createTerminator();
  let chosen: 'container' | 'host' | undefined = o.mode === 'auto' ? undefined : o.mode;
  // Set after a start until the admin API answers; while set nothing is started again.
  let pending: { until: number } | undefined;

  const ensure = async (mode: 'container' | 'host'): Promise<ProxyRunState> => {
    if (mode === 'host') {
      const state = await ensureHostCaddy({ svcDataDir: o.dataDir, adminUrl: o.adminUrl, log: o.log, answers: o.answers, terminator, bin: o.bin });
      if (state === 'running') return 'running';
      if (state === 'started') pending = { until: now() + READY_TIMEOUT_MS };
      return 'starting';
    }
    const r = await ensureProxyContainer({ runtime: o.runtime, image: o.image, adminUrl: o.adminUrl, dataDir: o.dataDir, instance: o.instance, log: o.log, mounts: o.mounts });
    if (!r.changed) return 'running';
    pending = { until: now() + READY_TIMEOUT_MS };
    return 'starting';
  };

  return async () => {
    if (!chosen) {
      const c = await chooseProxyMode(o);
      o.log.info('proxy mode chosen', { mode: c.mode, reason: c.reason, SVC_PROXY_MODE: 'auto' });
      chosen = c.mode;
    }
    if (!pending && (await ensure(chosen)) === 'running') return 'running';
    if (!pending) return 'starting';
    if (await o.answers()) {
      pending = undefined;
      return 'running';
    }
    if (now() < pending.until) return 'starting';
    pending = undefined;
    throw new Error(
      chosen === 'host'
        ? `the host Caddy did not answer at ${o.adminUrl} within ${READY_TIMEOUT_MS / 1000} s; ${hostCaddyLogTail(o.dataDir)}`
        : `the proxy container ${proxyContainerName(o.instance)} runs but its admin API at ${o.adminUrl} did not answer within ${READY_TIMEOUT_MS / 1000} s`,
    );
  };
}
