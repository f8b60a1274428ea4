// The manager's edge relay of a Swarm (docs/decisions/0038-swarm-edge-relay.md, 0047-swarm-edge-resolves.md): a
// Caddy in a local container (the proxy image) on the overlay, listening only on a unix socket under
// `<dataDir>/edge` (mounted at the same path), admin API on a second socket there; beside it the resolver, dnsmasq
// of SVC_RESOLVER_IMAGE reading the host responder's hosts files. A switch renames a hosts file; the relay's
// config changes only with the routes. Both run as svc's own user (its sockets, its mode-600 files).
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { LABELS, type ContainerInfo, type ContainerSpec, type Runtime } from '../runtime/runtime.js';
import { resolverArgs } from '../runtime/resolver-spec.js';
import { canonicalJson } from './config.js';
import { createEdgeAdmin, EdgeUnreachableError } from './edge-admin.js';
import { buildEdgeConfig, edgeBootstrap, type EdgePaths } from './edge-config.js';
import type { Route } from './proxy.js';

/** Label holding a hash of a container's spec: a changed image or user recreates it. */
const SPEC_LABEL = 'svc.edge-spec';
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
  /** SVC_PROXY_IMAGE (any Caddy 2 with /usr/bin/caddy) and SVC_RESOLVER_IMAGE (Debian's /usr/sbin/dnsmasq). */
  image: string;
  resolverImage: string | undefined;
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

const labelled = (base: Omit<ContainerSpec, 'labels'>, instance: string, role: string): ContainerSpec => {
  const hash = createHash('sha256').update(JSON.stringify(base)).digest('hex').slice(0, 16);
  return { ...base, labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance, [LABELS.role]: role, [SPEC_LABEL]: hash } };
};

/** Pure: the relay's and the resolver's container specs, with their spec hash labels. */
export function edgeRelaySpecs(o: Pick<EdgeRelayOptions, 'image' | 'resolverImage' | 'instance' | 'network' | 'hostsDir' | 'paths' | 'user'>): ContainerSpec[] {
  const { hostsDir } = o;
  const { home } = o.paths;
  // --resume: after a restart of the container (or the machine) it serves the last routes at once.
  const relay = labelled(
    { name: edgeRelayName(o.instance), image: o.image, network: o.network, user: o.user, entrypoint: ['/usr/bin/caddy'], cmd: ['run', '--resume', '--config', o.paths.bootstrap], env: { XDG_DATA_HOME: `${home}/data`, XDG_CONFIG_HOME: `${home}/config`, HOME: home }, mounts: [{ source: o.paths.dir, target: o.paths.dir }], restart: 'unless-stopped' },
    o.instance,
    'edge',
  );
  if (!o.resolverImage) throw new Error('SVC_RESOLVER_IMAGE is unset: on a Swarm the edge relays resolve apps through a dnsmasq container (an image with /usr/sbin/dnsmasq)');
  const resolver = labelled(
    { name: edgeResolverName(o.instance), image: o.resolverImage, network: o.network, user: o.user, cmd: resolverArgs(hostsDir, true), mounts: [{ source: hostsDir, target: hostsDir, readOnly: true }], restart: 'unless-stopped' },
    o.instance,
    'edge',
  );
  return [resolver, relay];
}

/** Pure: what to do with the container found under a wanted name. Throws when it is not ours. */
export function planEdgeContainer(found: ContainerInfo | undefined, wanted: ContainerSpec): 'none' | 'start' | 'create' | 'recreate' {
  if (!found) return 'create';
  const l = found.labels;
  if (l[LABELS.managed] !== 'true' || l[LABELS.instance] !== wanted.labels[LABELS.instance] || l[LABELS.role] !== 'edge') {
    throw new Error(`a container named ${wanted.name} exists that svc instance "${wanted.labels[LABELS.instance]}" did not create; remove or rename it`);
  }
  if (l[SPEC_LABEL] !== wanted.labels[SPEC_LABEL]) return 'recreate';
  return found.running ? 'none' : 'start';
}

/** Pure: every entry of Caddy's `GET /reverse_proxy/upstreams` answer summed by address; anything but a JSON list is none. */
export function upstreamCounts(text: string, out = new Map<string, number>()): Map<string, number> {
  let v: unknown;
  try {
    v = JSON.parse(text || 'null');
  } catch {
    return out;
  }
  if (!Array.isArray(v)) return out;
  for (const u of v as { address?: string; num_requests?: number }[]) if (u.address) out.set(u.address, (out.get(u.address) ?? 0) + (u.num_requests ?? 0));
  return out;
}

export function createEdgeRelay(o: EdgeRelayOptions): EdgeRelay {
  const admin = createEdgeAdmin(o.paths.adminSocket);
  const now = o.now ?? Date.now;
  let pending: { until: number } | undefined;
  let leftovers = true;
  const configOf = (routes: Route[]) =>
    buildEdgeConfig(routes, edgeResolverName(o.instance), { socket: o.paths.socket, adminSocket: o.paths.adminSocket, agentSocket: o.paths.agentSocket }) as { apps: { http: { '@id': string } } };
  const answers = async () => (await admin('GET', '/config/admin', undefined, 1000).catch(() => undefined))?.status === 200;

  /** The second relay, the link and its files of the pair before (docs/decisions/0039-two-relays-swapped.md): gone once. */
  const removeLeftovers = async () => {
    const b = await o.runtime.inspect(`${o.instance}-edge-b`);
    if (b && b.labels[LABELS.instance] === o.instance && b.labels[LABELS.role] === 'edge') await o.runtime.remove(b.id);
    for (const f of ['relay.sock', 'relay-b.sock', 'admin-b.sock', 'bootstrap-b.json', 'b']) await rm(join(o.paths.dir, f), { recursive: true, force: true });
    leftovers = false;
  };

  return {
    async ensureRunning() {
      let started = false;
      for (const spec of edgeRelaySpecs(o)) {
        const action = planEdgeContainer(await o.runtime.inspect(spec.name), spec);
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
          await writeFile(o.paths.bootstrap, JSON.stringify(edgeBootstrap(o.paths)) + '\n', { mode: 0o600 });
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
    async applyRoutes(routes) {
      if (await this.serves(routes)) return;
      const res = await admin('POST', '/load', canonicalJson(configOf(routes)));
      if (res.status !== 200) throw new Error(`the edge relay ${edgeRelayName(o.instance)} rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 2000)}`);
    },
    async serves(routes) {
      const res = await admin('GET', `/id/${configOf(routes).apps.http['@id']}/servers`, undefined, 2000).catch(() => undefined);
      return res?.status === 200;
    },
    async upstreamRequests() {
      const res = await admin('GET', '/reverse_proxy/upstreams', undefined, 5000).catch((err: Error) => {
        // Nothing is in flight through a relay that is down.
        if (err instanceof EdgeUnreachableError) return undefined;
        throw err;
      });
      if (res && res.status !== 200) throw new Error(`the edge relay's upstreams endpoint answered HTTP ${res.status}`);
      return res ? upstreamCounts(res.text) : new Map();
    },
  };
}
