// One edge relay of a Swarm (docs/decisions/0038-swarm-edge-relay.md): a Caddy in a local container of the
// manager (the proxy image), attached to the instance's overlay, listening only on a unix socket under
// `<dataDir>/edge` (mounted at the same path), admin API on a second socket there. The manager runs two,
// A (`<instance>-edge`) and B (`<instance>-edge-b`), swapped by edge-relays.ts. Here: one relay's container,
// and its admin calls (what it has, a load, its in-flight requests). It runs as svc's own user, so the
// sockets it makes are svc's and the host's Caddy (svc's user, or root in a container) can dial them.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { LABELS, type ContainerInfo, type ContainerSpec, type Runtime } from '../runtime/runtime.js';
import { canonicalJson } from './config.js';
import { createEdgeAdmin, EdgeUnreachableError } from './edge-admin.js';
import { buildEdgeConfig, edgeBootstrap, type RelayId, type RelayPaths } from './edge-config.js';
import type { DnsRecords } from './edge-config.js';
import type { Route } from './proxy.js';
import { addRequests, inFlight, parseUpstreams } from './edge-swap.js';

/** Label holding a hash of the relay's spec: a changed image or user recreates it. */
const SPEC_LABEL = 'svc.edge-spec';
/** How long a started relay may take before its admin socket answers. */
const READY_TIMEOUT_MS = 15_000;
/** How often a standby's in-flight requests are asked while waiting for them to end. */
const IDLE_POLL_MS = 20;

/** A is the name of the single relay of before (an upgrade recreates it with its new spec). */
export const edgeRelayName = (instance: string, id: RelayId = 'a') => (id === 'a' ? `${instance}-edge` : `${instance}-edge-${id}`);

export interface EdgeRelayUnitOptions {
  runtime: Runtime;
  /** The proxy image (SVC_PROXY_IMAGE): any Caddy 2 with /usr/bin/caddy. */
  image: string;
  instance: string;
  /** The instance's overlay network (SVC_NETWORK). */
  network: string;
  id: RelayId;
  /** `<dataDir>/edge`, mounted into the relay at the same path. */
  dir: string;
  paths: RelayPaths;
  /** Relay A's agent server socket; none on B (one listener per socket path). */
  agentSocket?: string;
  /** `uid:gid` the relay runs as: svc's own. */
  user: string;
  log: Logger;
  now?: () => number;
}

/** One relay, as the pair (edge-relays.ts) drives it. */
export interface EdgeRelayUnit {
  readonly id: RelayId;
  /** Makes sure its container runs; never waits for it (`starting`: ask again shortly). */
  ensureRunning(): Promise<'running' | 'starting'>;
  /** Pure: the canonical text of its config for these routes and addresses. */
  wanted(routes: Route[], records: DnsRecords): string;
  /** The canonical text of the config it has; undefined when its admin API does not answer. */
  config(): Promise<string | undefined>;
  /** Loads this config (a full reload of this relay); throws when refused or unreachable. */
  load(text: string): Promise<void>;
  /** Cheap: true when it answers with exactly the config of these routes and addresses. */
  serves(routes: Route[], records: DnsRecords): Promise<boolean>;
  /** Cheap: its admin API answers. */
  answers(): Promise<boolean>;
  /** In-flight requests per task address (`host:port`); empty when it is down. */
  upstreamRequests(): Promise<Map<string, number>>;
  /** Resolves once no request to a task is in flight through it, or after `maxMs`: false then. */
  waitIdle(maxMs: number): Promise<boolean>;
}

/** Pure: a relay's container spec, with its spec hash label. */
export function edgeRelaySpec(o: Pick<EdgeRelayUnitOptions, 'image' | 'instance' | 'network' | 'id' | 'dir' | 'paths' | 'user'>): ContainerSpec {
  const base = {
    name: edgeRelayName(o.instance, o.id),
    image: o.image,
    network: o.network,
    user: o.user,
    entrypoint: ['/usr/bin/caddy'],
    // --resume: after a restart of the container (or the machine) it serves the last routes at once.
    cmd: ['run', '--resume', '--config', o.paths.bootstrap],
    // Its own dirs: the other relay's autosave must never be the one it resumes.
    env: { XDG_DATA_HOME: `${o.paths.home}/data`, XDG_CONFIG_HOME: `${o.paths.home}/config`, HOME: o.paths.home },
    mounts: [{ source: o.dir, target: o.dir }],
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

export function createEdgeRelayUnit(o: EdgeRelayUnitOptions): EdgeRelayUnit {
  const admin = createEdgeAdmin(o.paths.adminSocket);
  const now = o.now ?? Date.now;
  let pending: { until: number } | undefined;
  const configOf = (routes: Route[], records: DnsRecords) =>
    buildEdgeConfig(routes, records, { socket: o.paths.socket, adminSocket: o.paths.adminSocket, agentSocket: o.agentSocket }) as { apps: { http: { '@id': string } } };

  const answers = async () => {
    try {
      return (await admin('GET', '/config/admin', undefined, 1000)).status === 200;
    } catch {
      return false;
    }
  };
  const upstreams = async () => {
    // Nothing is in flight through a relay that is down.
    const res = await admin('GET', '/reverse_proxy/upstreams', undefined, 5000).catch((err: Error) => {
      if (err instanceof EdgeUnreachableError) return undefined;
      throw err;
    });
    if (!res) return [];
    if (res.status !== 200) throw new Error(`the edge relay's upstreams endpoint answered HTTP ${res.status}`);
    return parseUpstreams(res.text);
  };

  return {
    id: o.id,
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
        await mkdir(o.dir, { recursive: true, mode: 0o700 });
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
    wanted: (routes, records) => canonicalJson(configOf(routes, records)),
    async config() {
      const have = await admin('GET', '/config/').catch((err: Error) => {
        if (err instanceof EdgeUnreachableError) return undefined;
        throw err;
      });
      if (!have) return undefined;
      if (have.status !== 200) return '';
      try {
        return canonicalJson(JSON.parse(have.text));
      } catch {
        return ''; // not JSON: up, but not what anyone wants
      }
    },
    async load(text) {
      const res = await admin('POST', '/load', text);
      if (res.status !== 200) throw new Error(`the edge relay ${edgeRelayName(o.instance, o.id)} rejected its config (HTTP ${res.status}): ${res.text.trim().slice(0, 2000)}`);
    },
    async serves(routes, records) {
      try {
        const res = await admin('GET', `/id/${configOf(routes, records).apps.http['@id']}/servers`, undefined, 2000);
        return res.status === 200;
      } catch {
        return false;
      }
    },
    answers,
    async upstreamRequests() {
      return addRequests(new Map(), await upstreams());
    },
    async waitIdle(maxMs) {
      const until = now() + maxMs;
      for (;;) {
        if (inFlight(await upstreams().catch(() => [])) === 0) return true;
        if (now() >= until) return false;
        await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
      }
    },
  };
}
