// Pure translation between our port's shapes and the Engine API's: a ContainerSpec into create options,
// an inspect document into ContainerInfo. Kept apart from I/O so it is table-tested without an engine.
import type Docker from 'dockerode';
import type { ContainerInfo, ContainerSpec, ContainerState, ResourceLimits } from './runtime.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';
const time = (t: string | undefined) => (t && t !== ZERO_TIME ? t : undefined);

/** Create options for POST /containers/create: binds for mounts, one network with aliases, no restarts by default. */
export function toCreateOptions(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const joinNetwork = spec.network && !spec.hostNetwork;
  return {
    name: spec.name,
    Image: spec.image,
    Env: spec.env ? Object.entries(spec.env).map(([k, v]) => `${k}=${v}`) : undefined,
    Labels: spec.labels,
    Cmd: spec.cmd,
    Entrypoint: spec.entrypoint,
    User: spec.user,
    WorkingDir: spec.workingDir,
    Healthcheck: healthcheckOf(spec.healthcheck),
    HostConfig: {
      NetworkMode: spec.hostNetwork ? 'host' : (spec.network ?? 'bridge'),
      Binds: spec.mounts?.map((m) => `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`),
      RestartPolicy: { Name: spec.restart ?? 'no' },
      Init: spec.init || undefined,
      Tmpfs: spec.tmpfs?.length ? Object.fromEntries(spec.tmpfs.map((t) => [t, ''])) : undefined,
      ...limits(spec.resources),
    },
    NetworkingConfig: joinNetwork
      ? { EndpointsConfig: { [spec.network!]: { Aliases: spec.networkAliases?.length ? spec.networkAliases : undefined } } }
      : undefined,
  };
}

const NS_PER_MS = 1_000_000;

/** A Compose healthcheck as the Engine API's (durations in nanoseconds); undefined: the image's own. */
function healthcheckOf(h: ContainerSpec['healthcheck']): Docker.ContainerCreateOptions['Healthcheck'] {
  if (h === undefined) return undefined;
  if (h === 'disabled') return { Test: ['NONE'] };
  return { Test: h.test, Interval: h.intervalMs * NS_PER_MS, Timeout: h.timeoutMs * NS_PER_MS, Retries: h.retries, StartPeriod: h.startPeriodMs * NS_PER_MS };
}

const MIB = 1024 * 1024;

/**
 * Memory in bytes with MemorySwap equal to it (no swap beyond the cap: a container over it is OOM-killed,
 * not swapped; without it the engine allows as much swap again), CPUs as NanoCpus. Null or absent: no key,
 * the engine's unlimited.
 */
export function limits(r: ResourceLimits | undefined): Pick<Docker.HostConfig, 'Memory' | 'MemorySwap' | 'NanoCpus'> {
  const out: Pick<Docker.HostConfig, 'Memory' | 'MemorySwap' | 'NanoCpus'> = {};
  if (r?.memoryMb != null) {
    if (!Number.isFinite(r.memoryMb) || r.memoryMb <= 0) throw new Error(`memory limit must be a positive number of MiB, not ${r.memoryMb}`);
    out.Memory = Math.round(r.memoryMb * MIB);
    out.MemorySwap = out.Memory;
  }
  if (r?.cpus != null) {
    if (!Number.isFinite(r.cpus) || r.cpus <= 0) throw new Error(`cpu limit must be a positive number of cores, not ${r.cpus}`);
    out.NanoCpus = Math.round(r.cpus * 1e9);
  }
  return out;
}

/** The subset of GET /containers/{id}/json we read. */
export interface InspectDoc {
  Id: string;
  Name: string;
  /** The id of the image the container was made from (`sha256:...`), whatever its reference names now. */
  Image?: string;
  Config?: { Image?: string; Labels?: Record<string, string> | null };
  State: {
    Status: string;
    Running: boolean;
    ExitCode?: number;
    OOMKilled?: boolean;
    Error?: string;
    StartedAt?: string;
    FinishedAt?: string;
    Health?: { Status?: string } | null;
  };
  NetworkSettings?: {
    IPAddress?: string;
    Networks?: Record<string, { IPAddress?: string; NetworkID?: string } | null> | null;
  };
}

/** Health as the port reports it; `none` when the image has no HEALTHCHECK. */
function health(status: string | undefined): ContainerInfo['health'] {
  return status === 'starting' || status === 'healthy' || status === 'unhealthy' ? status : 'none';
}

/** Address on `network` (or the first attached one), only while running. */
function address(doc: InspectDoc, network?: string): string | undefined {
  if (!doc.State.Running) return undefined;
  const nets = doc.NetworkSettings?.Networks ?? {};
  const ip = network ? nets[network]?.IPAddress : (Object.values(nets).find((n) => n?.IPAddress)?.IPAddress ?? doc.NetworkSettings?.IPAddress);
  return ip || undefined;
}

/** An engine's image id: what names one image for good, whatever tags point at it later. */
const IMAGE_ID_RE = /^sha256:[0-9a-f]{64}$/;

export function toContainerInfo(doc: InspectDoc, network?: string): ContainerInfo {
  const state = doc.State.Status as ContainerState;
  const stopped = state === 'exited' || state === 'dead';
  return {
    id: doc.Id,
    name: doc.Name.replace(/^\//, ''),
    image: doc.Config?.Image ?? '',
    imagePin: doc.Image && IMAGE_ID_RE.test(doc.Image) ? doc.Image : undefined,
    labels: doc.Config?.Labels ?? {},
    state,
    running: doc.State.Running,
    exitCode: stopped ? doc.State.ExitCode : undefined,
    oomKilled: doc.State.OOMKilled || undefined,
    address: address(doc, network),
    health: health(doc.State.Health?.Status),
    startedAt: time(doc.State.StartedAt),
    finishedAt: time(doc.State.FinishedAt),
    error: doc.State.Error || undefined,
  };
}

/** `docker -H` value into dockerode options; undefined means dockerode's defaults (DOCKER_HOST or the socket). */
export function dockerOptions(host: string | undefined): Docker.DockerOptions | undefined {
  if (!host) return undefined;
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('/')) return { socketPath: host };
  const u = new URL(host.replace(/^tcp:\/\//, 'http://'));
  const protocol = u.protocol === 'https:' ? 'https' : 'http';
  return { protocol, host: u.hostname, port: Number(u.port || (protocol === 'https' ? 2376 : 2375)) };
}
