// The manager's edge relay of a Swarm (docs/decisions/0038-swarm-edge-relay.md, 0047-swarm-edge-resolves.md): a
// Caddy in a local container (the proxy image) on the overlay, listening only on a unix socket under
// `<dataDir>/edge` (mounted at the same path), admin API on a second socket there; beside it the resolver, dnsmasq
// reading the host responder's hosts files. Both run as svc's own user (its sockets, its mode-600 files).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { LABELS, type ContainerSpec, type Runtime } from '../runtime/runtime.js';
import { resolverArgs } from '../runtime/resolver-spec.js';
import { EDGE_SPEC_LABEL, edgeAdminConfig, edgeLabels } from '../runtime/swarm-edge-spec.js';
import { planProxyContainer } from './container.js';
import { addUpstreams, createEdgeAdmin, ensureConfig, servesConfig } from './edge-admin.js';
import { buildEdgeConfig, type EdgePaths } from './edge-config.js';
import type { Route } from './proxy.js';

/** How long a started relay may take before its admin socket answers. */
const READY_TIMEOUT_MS = 15_000;

export const edgeRelayName = (instance: string) => `${instance}-edge`;
export const edgeResolverName = (instance: string) => `${instance}-edge-dns`;

/** What the edge wrapper (edge-proxy.ts) needs of the relay: `ensureRunning` never waits (`starting`: ask again). */
export interface EdgeRelay {
  ensureRunning(): Promise<'running' | 'starting'>;
  /** Loads the config of these routes unless `serves` them (their fingerprint answers). */
  applyRoutes(routes: Route[]): Promise<void>;
  serves(routes: Route[]): Promise<boolean>;
  /** In-flight requests per task address (`host:port`), for a drain; empty when it is down. */
  upstreamRequests(): Promise<Map<string, number>>;
}

export interface EdgeRelayOptions {
  runtime: Runtime;
  /** SVC_PROXY_IMAGE (any Caddy 2 with /usr/bin/caddy). */
  image: string;
  /** The resolver's image (an image with /usr/sbin/dnsmasq): SVC_RESOLVER_IMAGE or svc's own (resolver-image.ts). */
  resolverImage: () => Promise<string>;
  instance: string;
  /** The instance's overlay network (SVC_NETWORK). */
  network: string;
  /** The host responder's hosts directory (`data/proxy/dns`, src/dns/dnsmasq.ts): the resolver reads it. */
  hostsDir: string;
  paths: EdgePaths;
  /** `uid:gid` both run as: svc's own. */
  user: string;
  log: Logger;
  now?: () => number;
}

const labelled = (base: Omit<ContainerSpec, 'labels'>, instance: string): ContainerSpec => ({ ...base, labels: edgeLabels(instance, 'edge', base) });

/** Pure: the resolver's and the relay's container specs, with their spec hash labels. */
export function edgeRelaySpecs(o: Pick<EdgeRelayOptions, 'image' | 'instance' | 'network' | 'hostsDir' | 'paths' | 'user'> & { resolverImage: string }): ContainerSpec[] {
  const { hostsDir, paths, instance } = o;
  const resolver = { name: edgeResolverName(instance), image: o.resolverImage, network: o.network, user: o.user, cmd: resolverArgs(hostsDir, true), mounts: [{ source: hostsDir, target: hostsDir, readOnly: true }], restart: 'unless-stopped' as const };
  // --resume: after a restart of the container (or the machine) it serves the last routes at once.
  const env = { XDG_DATA_HOME: `${paths.home}/data`, XDG_CONFIG_HOME: `${paths.home}/config`, HOME: paths.home };
  const relay = { name: edgeRelayName(instance), image: o.image, network: o.network, user: o.user, entrypoint: ['/usr/bin/caddy'], cmd: ['run', '--resume', '--config', paths.bootstrap], env, mounts: [{ source: paths.dir, target: paths.dir }], restart: 'unless-stopped' as const };
  return [labelled(resolver, instance), labelled(relay, instance)];
}

export function createEdgeRelay(o: EdgeRelayOptions): EdgeRelay {
  const admin = createEdgeAdmin(o.paths.adminSocket);
  const now = o.now ?? Date.now;
  let pending: { until: number } | undefined;
  let leftovers = true;
  const configOf = (routes: Route[]) => buildEdgeConfig(routes, edgeResolverName(o.instance), o.paths);
  const answers = async () => (await admin('GET', '/config/admin', undefined, 1000).catch(() => undefined))?.status === 200;

  /** The second relay, the link and its files of the pair of decision 0039: gone once (an upgrade from it). */
  const removeLeftovers = async () => {
    const b = await o.runtime.inspect(`${o.instance}-edge-b`);
    if (b && b.labels[LABELS.instance] === o.instance && b.labels[LABELS.role] === 'edge') await o.runtime.remove(b.id);
    for (const f of ['relay.sock', 'relay-b.sock', 'admin-b.sock', 'bootstrap-b.json', 'b']) await rm(join(o.paths.dir, f), { recursive: true, force: true });
    leftovers = false;
  };

  return {
    async ensureRunning() {
      let started = false;
      for (const spec of edgeRelaySpecs({ ...o, resolverImage: await o.resolverImage() })) {
        const action = planProxyContainer(await o.runtime.inspect(spec.name), spec, 'edge', EDGE_SPEC_LABEL);
        if (action === 'none') continue;
        started = true;
        if (action === 'start') await o.runtime.start(spec.name);
        else {
          if (!(await o.runtime.hasImage(spec.image))) {
            o.log.info('pulling an image for the edge relay', { image: spec.image });
            await o.runtime.pull(spec.image);
          }
          await mkdir(o.paths.dir, { recursive: true, mode: 0o700 });
          await mkdir(o.hostsDir, { recursive: true, mode: 0o700 });
          await writeFile(o.paths.bootstrap, JSON.stringify({ admin: edgeAdminConfig(o.paths.adminSocket) }) + '\n', { mode: 0o600 });
          await o.runtime.ensureNetwork(o.network);
          if (action === 'recreate') await o.runtime.remove(spec.name);
          const info = await o.runtime.run(spec);
          if (!info.running) throw new Error(`${spec.name} exited at once (exit ${info.exitCode ?? '?'}${info.error ? `: ${info.error}` : ''})`);
        }
        o.log.info('edge relay part started', { action, name: spec.name, image: spec.image });
      }
      if (leftovers) await removeLeftovers();
      if (started) pending = { until: now() + READY_TIMEOUT_MS };
      if (!pending) return 'running';
      if (await answers()) {
        pending = undefined;
        return 'running';
      }
      if (now() < pending.until) return 'starting';
      pending = undefined;
      throw new Error(`the edge relay runs but its admin socket ${o.paths.adminSocket} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
    },
    applyRoutes: (routes) => ensureConfig(admin, configOf(routes), 'servers', `the edge relay ${edgeRelayName(o.instance)}`),
    serves: (routes) => servesConfig(admin, configOf(routes), 'servers'),
    upstreamRequests: () => addUpstreams(admin, new Map(), 5000),
  };
}
