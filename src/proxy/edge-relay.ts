// The edge relay of a Swarm (docs/design.md "The edge on a Swarm"): a Caddy in a local container of the
// manager (`<instance>-edge`, the proxy image), attached to the instance's overlay, listening only on a
// unix socket under `<dataDir>/edge` (mounted at the same path), admin API on a second socket there. svc
// loads its whole config (edge-config.ts) when the routes or the task addresses change, comparing with
// what the relay has first, as the host's Caddy adapter does. It runs as svc's own user, so the sockets
// it makes are svc's and the host's Caddy (svc's user, or root in a container) can dial them.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { LABELS, type ContainerInfo, type ContainerSpec, type Runtime } from '../runtime/runtime.js';
import { canonicalJson } from './config.js';
import { createEdgeAdmin, EdgeUnreachableError } from './edge-admin.js';
import { buildEdgeConfig, edgeBootstrap, type EdgePaths } from './edge-config.js';
import type { DnsRecords } from './edge-config.js';
import type { Route } from './proxy.js';

/** Label holding a hash of the relay's spec: a changed image or user recreates it. */
const SPEC_LABEL = 'svc.edge-spec';
/** How long a started relay may take before its admin socket answers. */
const READY_TIMEOUT_MS = 15_000;

export const edgeRelayName = (instance: string) => `${instance}-edge`;

export interface EdgeRelayOptions {
  runtime: Runtime;
  /** The proxy image (SVC_PROXY_IMAGE): any Caddy 2 with /usr/bin/caddy. */
  image: string;
  instance: string;
  /** The instance's overlay network (SVC_NETWORK). */
  network: string;
  paths: EdgePaths;
  /** `uid:gid` the relay runs as: svc's own. */
  user: string;
  log: Logger;
  now?: () => number;
}

export interface EdgeRelay {
  /** Makes sure the relay container runs; never waits for it (`starting`: ask again shortly). */
  ensureRunning(): Promise<'running' | 'starting'>;
  /** Loads the config for these routes and the last task addresses, when the relay has another. */
  applyRoutes(routes: Route[]): Promise<void>;
  /** New task addresses: loaded at once when the routes are known (a switch waits on this). */
  setRecords(records: DnsRecords): Promise<void>;
  /** Cheap: true when the relay answers with exactly the config of these routes and the last addresses. */
  serves(routes: Route[]): Promise<boolean>;
  /** In-flight requests per task address (`host:port`), for draining a replica. */
  upstreamRequests(): Promise<Map<string, number>>;
}

/** Pure: the relay's container spec, with its spec hash label. */
export function edgeRelaySpec(o: Pick<EdgeRelayOptions, 'image' | 'instance' | 'network' | 'paths' | 'user'>): ContainerSpec {
  const base = {
    name: edgeRelayName(o.instance),
    image: o.image,
    network: o.network,
    user: o.user,
    entrypoint: ['/usr/bin/caddy'],
    // --resume: after a restart of the container (or the machine) it serves the last routes at once.
    cmd: ['run', '--resume', '--config', o.paths.bootstrap],
    env: { XDG_DATA_HOME: `${o.paths.dir}/data`, XDG_CONFIG_HOME: `${o.paths.dir}/config`, HOME: o.paths.dir },
    mounts: [{ source: o.paths.dir, target: o.paths.dir }],
    restart: 'unless-stopped' as const,
  };
  const hash = createHash('sha256').update(JSON.stringify(base)).digest('hex').slice(0, 16);
  return { ...base, labels: { [LABELS.managed]: 'true', [LABELS.instance]: o.instance, [LABELS.role]: 'edge', [SPEC_LABEL]: hash } };
}

/** Pure: what to do with the container found under the relay's name. Throws when it is not ours. */
export function planEdgeRelay(found: ContainerInfo | undefined, wanted: ContainerSpec): 'none' | 'start' | 'create' | 'recreate' {
  if (!found) return 'create';
  const l = found.labels;
  if (l[LABELS.managed] !== 'true' || l[LABELS.instance] !== wanted.labels[LABELS.instance] || l[LABELS.role] !== 'edge') {
    throw new Error(`a container named ${wanted.name} exists that svc instance "${wanted.labels[LABELS.instance]}" did not create; remove or rename it`);
  }
  if (l[SPEC_LABEL] !== wanted.labels[SPEC_LABEL]) return 'recreate';
  return found.running ? 'none' : 'start';
}

export function createEdgeRelay(o: EdgeRelayOptions): EdgeRelay {
  const admin = createEdgeAdmin(o.paths.adminSocket);
  const now = o.now ?? Date.now;
  let routes: Route[] | undefined;
  let records: DnsRecords = {};
  let pending: { until: number } | undefined;
  let chain: Promise<void> = Promise.resolve();
  const configOf = (rs: Route[]) => buildEdgeConfig(rs, records, o.paths) as { apps: { http: { '@id': string } } };

  const answers = async () => {
    try {
      return (await admin('GET', '/config/', undefined, 1000)).status === 200;
    } catch {
      return false;
    }
  };

  const loadOnce = async () => {
    if (!routes) return;
    const text = canonicalJson(configOf(routes));
    const have = await admin('GET', '/config/');
    if (have.status === 200) {
      try {
        if (canonicalJson(JSON.parse(have.text)) === text) return;
      } catch {
        /* not JSON: load */
      }
    }
    const res = await admin('POST', '/load', text);
    if (res.status !== 200) throw new Error(`the edge relay rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 2000)}`);
  };
  // Serialised: a switch's new addresses and a route change must not interleave their compare and load.
  const load = () => {
    const run = chain.then(loadOnce);
    chain = run.catch(() => {});
    return run;
  };

  return {
    async ensureRunning() {
      const spec = edgeRelaySpec(o);
      const action = planEdgeRelay(await o.runtime.inspect(spec.name), spec);
      if (action === 'none') {
        if (!pending) return 'running';
        if (await answers()) {
          pending = undefined;
          return 'running';
        }
        if (now() < pending.until) return 'starting';
        pending = undefined;
        throw new Error(`the edge relay ${spec.name} runs but its admin socket ${o.paths.adminSocket} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
      }
      if (action === 'start') await o.runtime.start(spec.name);
      else {
        if (!(await o.runtime.hasImage(spec.image))) {
          o.log.info('pulling the proxy image for the edge relay', { image: spec.image });
          await o.runtime.pull(spec.image);
        }
        await mkdir(o.paths.dir, { recursive: true, mode: 0o700 });
        await writeFile(o.paths.bootstrap, JSON.stringify(edgeBootstrap(o.paths)) + '\n', { mode: 0o600 });
        await o.runtime.ensureNetwork(o.network);
        if (action === 'recreate') await o.runtime.remove(spec.name);
        const info = await o.runtime.run(spec);
        if (!info.running) throw new Error(`the edge relay ${spec.name} exited at once (exit ${info.exitCode ?? '?'}${info.error ? `: ${info.error}` : ''})`);
      }
      o.log.info('edge relay started', { action, name: spec.name, image: spec.image });
      pending = { until: now() + READY_TIMEOUT_MS };
      return 'starting';
    },
    async applyRoutes(rs) {
      routes = rs;
      await load();
    },
    async setRecords(next) {
      records = next;
      try {
        await load();
      } catch (err) {
        // A relay that is down serves nothing either way: a switch still completes, and the proxy
        // reconciler's next look (1 s) starts the relay and loads these addresses.
        if (!(err instanceof EdgeUnreachableError)) throw err;
        o.log.warn('edge relay unreachable; its addresses are loaded when it runs again', { error: err.message });
      }
    },
    async serves(rs) {
      try {
        const res = await admin('GET', `/id/${configOf(rs).apps.http["@id"]}/servers`, undefined, 2000);
        return res.status === 200 && routes !== undefined;
      } catch {
        return false;
      }
    },
    async upstreamRequests() {
      const out = new Map<string, number>();
      // Nothing is in flight through a relay that is down.
      const res = await admin('GET', '/reverse_proxy/upstreams', undefined, 5000).catch((err: Error) => {
        if (err instanceof EdgeUnreachableError) return undefined;
        throw err;
      });
      if (!res) return out;
      if (res.status !== 200) throw new Error(`the edge relay's upstreams endpoint answered HTTP ${res.status}`);
      for (const u of (JSON.parse(res.text || 'null') as { address?: string; num_requests?: number }[] | null) ?? []) {
        if (u.address) out.set(u.address, (out.get(u.address) ?? 0) + (u.num_requests ?? 0));
      }
      return out;
    },
  };
}
