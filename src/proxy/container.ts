// SVC_PROXY_MODE=container: svc runs Caddy itself as one host-network container (port-mode listeners
// open without recreating it). Only the Runtime port is used, so the fake runtime tests it. Caddy
// starts with `run --resume`: after a container or host restart it serves the last loaded routes at
// once, with no daemon needed; the first start uses a bootstrap config that only sets the admin listener.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { LABELS, type ContainerInfo, type ContainerSpec, type Mount, type Runtime } from '../runtime/runtime.js';
import { adminListen } from './config.js';

/** Label holding a hash of the container spec: a changed image or command recreates the container. */
export const SPEC_LABEL = 'svc.proxy-spec';
/** `svc-proxy` for the default instance `svc`; another instance on the same engine gets its own name. */
export const proxyContainerName = (instance: string) => `${instance}-proxy`;

export interface ProxyContainerOptions {
  runtime: Runtime;
  image: string;
  adminUrl: string;
  /** `<dataDir>/proxy/{data,config}` hold certificates and Caddy's autosaved config. */
  dataDir: string;
  instance: string;
  /** Default `<instance>-proxy`. */
  name?: string;
  log: Logger;
  /** Extra mounts (the Swarm edge relay's socket directory, at the same path); none on one engine. */
  mounts?: Mount[];
  /** Called after a (re)start; resolves false when the admin API did not answer in time. */
  waitReady?: (timeoutMs: number) => Promise<boolean>;
}

export type ProxyContainerAction = 'none' | 'start' | 'create' | 'recreate';

export interface ProxyContainerResult {
  action: ProxyContainerAction;
  /** True when Caddy was (re)started: the caller must apply the routes again (Proxy.apply does it). */
  changed: boolean;
}

/** Pure: the container spec for this configuration, with its spec hash label. */
export function proxyContainerSpec(o: Pick<ProxyContainerOptions, 'image' | 'adminUrl' | 'dataDir' | 'instance' | 'name' | 'mounts'>): ContainerSpec {
  const base = {
    name: o.name ?? proxyContainerName(o.instance),
    image: o.image,
    hostNetwork: true,
    entrypoint: ['/usr/bin/caddy'],
    cmd: ['run', '--resume', '--config', '/config/bootstrap.json'],
    env: { XDG_DATA_HOME: '/data', XDG_CONFIG_HOME: '/config' },
    mounts: [
      { source: join(o.dataDir, 'proxy', 'data'), target: '/data' },
      { source: join(o.dataDir, 'proxy', 'config'), target: '/config' },
      ...(o.mounts ?? []),
    ],
    restart: 'unless-stopped' as const,
  };
  const hash = createHash('sha256').update(JSON.stringify({ ...base, admin: adminListen(o.adminUrl) })).digest('hex').slice(0, 16);
  return {
    ...base,
    labels: { [LABELS.managed]: 'true', [LABELS.instance]: o.instance, [LABELS.role]: 'proxy', [SPEC_LABEL]: hash },
  };
}

/**
 * Pure: what to do given the container found under the proxy's name (or another of svc's Caddy containers: the
 * Swarm edge's `role` and spec label). Throws when it is not ours.
 */
export function planProxyContainer(found: ContainerInfo | undefined, wanted: ContainerSpec, role = 'proxy', specLabel = SPEC_LABEL): ProxyContainerAction {
  if (!found) return 'create';
  const l = found.labels;
  if (l[LABELS.managed] !== 'true' || l[LABELS.instance] !== wanted.labels[LABELS.instance] || l[LABELS.role] !== role) {
    throw new Error(`a container named ${wanted.name} exists that svc instance "${wanted.labels[LABELS.instance]}" did not create; remove or rename it`);
  }
  if (l[specLabel] !== wanted.labels[specLabel]) return 'recreate';
  return found.running ? 'none' : 'start';
}

/** Makes sure the proxy container runs with the current spec; waits for its admin API after a (re)start. */
export async function ensureProxyContainer(o: ProxyContainerOptions): Promise<ProxyContainerResult> {
  const spec = proxyContainerSpec(o);
  const action = planProxyContainer(await o.runtime.inspect(spec.name), spec);
  if (action === 'none') return { action, changed: false };

  if (action !== 'start') {
    if (!(await o.runtime.hasImage(spec.image))) {
      o.log.info('pulling the proxy image', { image: spec.image });
      await o.runtime.pull(spec.image).catch((err: Error) => {
        throw new Error(`cannot pull the proxy image ${spec.image} (SVC_PROXY_IMAGE): ${err.message}`);
      });
    }
    const configDir = join(o.dataDir, 'proxy', 'config');
    await mkdir(join(o.dataDir, 'proxy', 'data'), { recursive: true, mode: 0o700 });
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    await writeFile(join(configDir, 'bootstrap.json'), JSON.stringify({ admin: { listen: adminListen(o.adminUrl) } }) + '\n', { mode: 0o600 });
    if (action === 'recreate') await o.runtime.remove(spec.name);
    const info = await o.runtime.run(spec);
    if (!info.running) throw new Error(`the proxy container ${spec.name} exited at once (exit ${info.exitCode ?? '?'}${info.error ? `: ${info.error}` : ''})`);
  } else {
    await o.runtime.start(spec.name);
  }
  o.log.info('proxy container ready', { action, name: spec.name, image: spec.image });
  if (o.waitReady && !(await o.waitReady(15_000))) {
    throw new Error(`the proxy container ${spec.name} runs but its admin API at ${o.adminUrl} does not answer`);
  }
  return { action, changed: true };
}
