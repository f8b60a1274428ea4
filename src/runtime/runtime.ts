// The Runtime port: the narrow slice of a container engine the reconcilers use. `docker.ts` implements it
// over dockerode; reconciler tests use a small fake of it (test/support/fake-runtime.ts).

/** Labels every container svc creates carries; `svc.instance` keeps two daemons on one engine apart. */
export const LABELS = {
  managed: 'svc.managed',
  instance: 'svc.instance',
  app: 'svc.app',
  /** The app row id: a deleted and re-created app of the same name never adopts the old containers. */
  appId: 'svc.app-id',
  deploy: 'svc.deploy',
  role: 'svc.role',
  service: 'svc.service',
  /**
   * The app a job run or one-off command belongs to (role `job`). Not `svc.app`: the app reconciler removes
   * every `svc.app` container it does not own, and a run is the jobs reconciler's.
   */
  jobApp: 'svc.job-app',
  /** The job_runs row id of a run's container. */
  jobRun: 'svc.job-run',
} as const;

/** A stop or removal of a container that does not carry this instance's label: svc never touches it. */
export class NotOursError extends Error {
  constructor(nameOrId: string, instance: string, found: string | undefined) {
    super(
      `container ${nameOrId} is not this svc instance's (its svc.instance label is ${found === undefined ? 'missing' : JSON.stringify(found)}, ` +
        `this instance is ${JSON.stringify(instance)}); svc leaves it alone: remove or rename it yourself`,
    );
  }
}

/** The engine is already removing the container: its name is not free yet. Retry shortly; nothing failed. */
export class RemovalInProgressError extends Error {
  constructor(nameOrId: string) {
    super(`the engine is still removing container ${nameOrId}; trying again shortly`);
  }
}

/** A container (or, on a Swarm, a service) of that name exists already: remove it first, or pick another name. */
export class NameInUseError extends Error {
  constructor(message: string) {
    super(message);
  }
}

/**
 * A stopped container could not start because a network it was attached to is gone (removed behind svc's
 * back: the engine keeps the old network's id in the container, so even a network made again under the same
 * name does not help). The adapter has forgotten the networks it ensured; the caller removes the container
 * and runs it again from its spec after ensuring the network (the next pass, through its plan).
 */
export class NetworkGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkGoneError';
  }
}

/** How soon a pass that met a removal in progress comes back. */
export const REMOVAL_RETRY_MS = 100;

/** Pure: the NotOursError for a container that is not `instance`'s, or undefined when it is ours. */
export function notOurs(nameOrId: string, labels: Record<string, string>, instance: string): NotOursError | undefined {
  return labels[LABELS.instance] === instance ? undefined : new NotOursError(nameOrId, instance, labels[LABELS.instance]);
}

export type Role = 'app' | 'service' | 'proxy' | 'build' | 'job' | 'probe';

export interface Mount {
  source: string;
  target: string;
  readOnly?: boolean;
}

/**
 * Resource limits of one container (issue 19: a memory cap so one app cannot starve the others). Absent or
 * null: unlimited. The memory cap includes swap (none beyond it), so a container over it is killed for
 * memory instead of swapping the host.
 */
/**
 * Credentials for a private registry, as the engine takes them (`X-Registry-Auth`). Handed to the engine
 * only: never logged, never in an event.
 */
export interface RegistryAuth {
  /** The registry, as in the image reference (`ghcr.io`, `registry.example.com:5000`; Docker Hub: `docker.io`). */
  serveraddress: string;
  username: string;
  password: string;
}

/** Finds the credentials svc holds for the registry of an image reference; undefined: pull anonymously. */
export type RegistryAuthLookup = (imageRef: string) => RegistryAuth | undefined;

export interface ResourceLimits {
  /** Memory cap in MiB (the engine's minimum is 6). */
  memoryMb?: number | null;
  /** CPU share in cores, e.g. 0.5 (fractions allowed; the engine refuses more than the host has). */
  cpus?: number | null;
}

export interface ContainerSpec {
  name: string;
  image: string;
  env?: Record<string, string>;
  labels: Record<string, string>;
  /** Network to join (ignored with hostNetwork). */
  network?: string;
  networkAliases?: string[];
  hostNetwork?: boolean;
  cmd?: string[];
  entrypoint?: string[];
  mounts?: Mount[];
  user?: string;
  workingDir?: string;
  /**
   * Run a tiny init as PID 1 (Docker's `--init`): it forwards SIGTERM to the app and reaps zombies, so an
   * app that never installed a SIGTERM handler still stops at once instead of after the whole grace period.
   */
  init?: boolean;
  /**
   * More networks to join, each with its aliases (a stack service on its stack's networks, reachable by its
   * Compose name there). Made when missing. One engine only: a Swarm refuses them.
   */
  extraNetworks?: { name: string; aliases: string[] }[];
  /** The engine's own health check (a Compose `healthcheck`); `disabled` turns the image's off. */
  healthcheck?: { test: string[]; intervalMs: number; timeoutMs: number; retries: number; startPeriodMs: number } | 'disabled';
  /** Container paths mounted as tmpfs. */
  tmpfs?: string[];
  /** Engine-level restart policy; svc heals by itself, so `no` is the default. */
  restart?: 'no' | 'unless-stopped';
  /** Memory and CPU limits; unlimited when absent. */
  resources?: ResourceLimits;
  /**
   * A Swarm pins the task to this node, the one whose disk was just prepared for it (a managed service's
   * data directory): `here` is the node svc runs on. Without it the labels decide at create time, which
   * could differ from the disk prepared a moment before. One engine: ignored (it is the only node).
   */
  dataNode?: DataNode | 'here';
}

export type ContainerState = 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';

export interface ContainerInfo {
  id: string;
  name: string;
  image: string;
  /**
   * What names exactly the image this container runs, so a later container runs the same one: one engine's
   * image id (`sha256:...`, which `run` takes as its image). Undefined when the runtime cannot say (a Swarm
   * task: its node's engine resolved the reference).
   */
  imagePin?: string;
  labels: Record<string, string>;
  state: ContainerState;
  running: boolean;
  /** Exit code of a stopped container (137 after SIGKILL, whether by `docker kill` or for memory). */
  exitCode?: number;
  /**
   * True when the engine killed a process of the container for exceeding its memory cap (`OOMKilled`):
   * what tells an OOM kill from any other exit 137. Only set (true) when the engine says so.
   */
  oomKilled?: boolean;
  /**
   * Swarm only: exit 137 of a task that ended on its own under a memory limit, on a node whose engine svc
   * cannot ask (Swarm's task status carries no OOMKilled flag). Most likely a kill for memory; never set
   * together with `oomKilled`.
   */
  oomLikely?: boolean;
  /** IPv4 address on the named network (the `svc` network), when attached and running. */
  address?: string;
  /** Docker HEALTHCHECK status; `none` when the image defines no health check. */
  health: 'none' | 'starting' | 'healthy' | 'unhealthy';
  startedAt?: string;
  finishedAt?: string;
  /** Engine error of the last start attempt, if any. */
  error?: string;
  /**
   * A stopped container the runtime itself knows did not end on its own: on a Swarm, the orchestrator shut
   * its task down (a drain of its node, a rebalance, a scale or update by someone else) or its node is down.
   * Says nothing about its version (the post-switch watch heals it, never flips back for it). Undefined when
   * the runtime cannot tell (one engine: the app reconciler asks the engine's event history instead).
   */
  stoppedFromOutside?: boolean;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
  /** RFC 3339 timestamp from the engine. */
  time: string;
}

export interface RuntimeEvent {
  /** Engine action: start, die, oom, destroy, stop, kill, health_status, ... */
  action: string;
  id: string;
  name: string;
  labels: Record<string, string>;
  /** The signal of a `kill` event (the engine's attribute, e.g. "9" or "15"). */
  signal?: string;
  /** When the engine recorded it, by the engine's clock (what container start times are in). */
  atMs?: number;
}

export interface PullProgress {
  status: string;
  id?: string;
  progress?: string;
}

/** A machine containers run on (docs/api.md "Nodes"): the one engine, or a Swarm node. */
export interface NodeView {
  id: string;
  hostname: string;
  address: string;
  role: 'manager' | 'worker';
  leader: boolean;
  availability: 'active' | 'pause' | 'drain';
  /** ready, down, unknown, disconnected. */
  state: string;
  labels: Record<string, string>;
  engineVersion: string;
  cpus: number;
  memoryMb: number;
}

export interface NodeChange {
  availability?: 'active' | 'pause' | 'drain';
  /** Replaces the node's labels. */
  labels?: Record<string, string>;
}

/** A node other than the one svc runs on, whose disk holds a container's data directory (issue 19). */
export interface DataNode {
  id: string;
  hostname: string;
}

/**
 * A directory tree on one node's disk, reached through a short-lived helper container there (a restore of
 * services held on that node, a service's first directory there). Paths are relative to the data directory,
 * plain (no `..`); every operation is one step on that node's filesystem. The data directory itself need
 * not exist on the node yet: `mkdir` makes it.
 */
export interface NodeDisk {
  exists(path: string): Promise<boolean>;
  /** mkdir -p, mode 700 for the data directory and every component of `path` it makes. */
  mkdir(path: string): Promise<void>;
  /** Gives `path` (not what is in it) this numeric owner (a group of undefined keeps its group) and mode. */
  own(path: string, uid: number, gid: number | undefined, mode: number): Promise<void>;
  /** Writes a small file (replacing it) with this mode, owned by root, in an existing directory. */
  writeFile(path: string, content: string, mode: number): Promise<void>;
  /** A rename on that filesystem (atomic); `to` must not exist. */
  rename(from: string, to: string): Promise<void>;
  /** rm -rf; a missing path is not an error. */
  remove(path: string): Promise<void>;
  /** Unpacks a tar stream into the existing directory `path`. */
  unpack(path: string, tar: NodeJS.ReadableStream): Promise<void>;
  /** Removes the helper; nothing of it is left on the node. */
  close(): Promise<void>;
}

/** A node operation of Swarm asked of a single engine (SVC_RUNTIME=docker). */
export class NotASwarmError extends Error {
  constructor(what: string) {
    super(`${what} needs SVC_RUNTIME=swarm on a Swarm manager; this svc drives a single Docker engine`);
  }
}

/** A node id the cluster does not know. */
export class NoSuchNodeError extends Error {
  constructor(id: string) {
    super(`node ${id} not found`);
  }
}

export interface Runtime {
  /** The machines containers run on: one for a single engine, every node of a Swarm. */
  nodes(): Promise<NodeView[]>;
  /** Node id -> this instance's app and service containers running there (name and labels). */
  placements(): Promise<Map<string, { name: string; labels: Record<string, string> }[]>>;
  /** Availability and labels of a Swarm node; a single engine throws NotASwarmError, an unknown id NoSuchNodeError. */
  updateNode(id: string, change: NodeChange): Promise<NodeView>;
  /** The join token and the manager's `host:port`, for `docker swarm join`; a single engine throws NotASwarmError. */
  joinInfo(role: 'worker' | 'manager'): Promise<{ token: string; address: string }>;
  /**
   * The node other than the one svc runs on whose disk holds this container's bind-mounted data (a managed
   * service pinned to a worker); undefined when the data is on this host's disk (always for one engine, and
   * for a name the runtime does not know).
   */
  dataNodeOf(nameOrId: string): Promise<DataNode | undefined>;
  /** Where a managed service created now would hold its data, when not on this host (a labelled worker). */
  newServiceDataNode(): Promise<DataNode | undefined>;
  /**
   * A tar stream of the directory `path` inside the container, read by the engine of the node holding it
   * (Docker's archive endpoint: entries `<basename of path>/...`, owners and modes as on that disk). Works on
   * a stopped container too. The caller consumes or destroys the stream.
   */
  readDir(nameOrId: string, path: string): Promise<NodeJS.ReadableStream>;
  /**
   * The data directory `dataDir` on another node's disk, through a helper named after `tag` (one per tag:
   * a leftover of an earlier one is replaced). Only a Swarm has other nodes; one engine throws.
   */
  openNodeDisk(node: DataNode, dataDir: string, tag: string): Promise<NodeDisk>;
  /** True when the engine answers. */
  ping(): Promise<boolean>;
  /** Creates the bridge network when missing (idempotent). */
  ensureNetwork(name: string): Promise<void>;
  /** Names of this instance's networks that start with `prefix` (a stack's, src/stacks/service-spec.ts). */
  listNetworks(prefix: string): Promise<string[]>;
  /** Removes one of this instance's networks; a missing one is not an error, another's is never touched. */
  deleteNetwork(name: string): Promise<void>;
  /** Containers in every state whose labels include all of `labels`. */
  list(labels: Record<string, string>, network?: string): Promise<ContainerInfo[]>;
  /** undefined when no such container. `network` picks which network's address is reported. */
  inspect(nameOrId: string, network?: string): Promise<ContainerInfo | undefined>;
  /** Creates and starts a container; returns its state after start. */
  run(spec: ContainerSpec): Promise<ContainerInfo>;
  /** Starts a stopped container; NetworkGoneError when a network it was attached to is gone (recreate it). */
  start(nameOrId: string): Promise<void>;
  /**
   * SIGTERM, then SIGKILL after `graceSeconds`. A missing or stopped container is not an error. Only a
   * container labelled with this instance is stopped (rule 14); another one throws NotOursError, except
   * with `adopted`: an adopted app's own container, which the user handed to svc by name.
   */
  stop(nameOrId: string, graceSeconds: number, opts?: { adopted?: boolean }): Promise<void>;
  /**
   * Force-removes; a missing container is not an error. Only a container labelled with this instance is
   * removed (rule 14); another one (same name, other or no label) is left alone and throws NotOursError.
   * A removal the engine already has in progress throws RemovalInProgressError at once (no wait): a caller
   * that needs the name free comes back shortly (`requeueAfterMs`), any other lets the queue back off.
   */
  remove(nameOrId: string): Promise<void>;
  exec(nameOrId: string, cmd: string[], opts?: { env?: Record<string, string>; user?: string }): Promise<ExecResult>;
  /**
   * Runs `cmd` with its stdout streamed into the file `path` (created, mode 600, fsynced), never held in
   * memory: for dumps of any size. Resolves with the exit code and the last 64 KiB of stderr.
   */
  execToFile(nameOrId: string, cmd: string[], path: string, opts?: { env?: Record<string, string>; user?: string }): Promise<{ exitCode: number; stderr: string }>;
  /** Demultiplexed log lines; ends when the container stops (follow) or the signal aborts. */
  logs(nameOrId: string, opts: { follow: boolean; tail?: number; signal?: AbortSignal }): AsyncIterable<LogLine>;
  /**
   * Container events of the engine until the signal aborts. `onConnected` (optional) is called once the
   * engine has accepted the subscription, so a watcher knows from when on no event is missed.
   */
  events(signal: AbortSignal, opts?: { onConnected?: () => void }): AsyncIterable<RuntimeEvent>;
  /**
   * The actions the engine recorded for one container (by id) from `sinceMs` until now, oldest first:
   * what a pass needs to know why a container stopped (a `kill` from `docker kill`, `docker stop` or
   * `docker rm -f`, or none: it exited on its own). Bounded by the engine's own event history.
   */
  pastActions(containerId: string, sinceMs: number): Promise<string[]>;
  hasImage(ref: string): Promise<boolean>;
  /**
   * The user an image's containers run as (its `Config.User`: `1001`, `1001:0`, `redis`), undefined for
   * root (unset) or an image this engine does not have. A managed service's data directory is made
   * usable by that user before its first start.
   */
  imageUser(ref: string): Promise<string | undefined>;
  pull(ref: string, onProgress?: (p: PullProgress) => void): Promise<void>;
  /** Logs in to a registry with these credentials (the engine's `/auth`): its status, or throws its reason. */
  registryLogin(auth: RegistryAuth): Promise<string>;
  /** Builds an image from a directory with a Dockerfile at its root; `signal` cancels the build in the engine. */
  build(contextDir: string, tag: string, onLog?: (line: string) => void, signal?: AbortSignal): Promise<void>;
  /** The tags of `repository` (`svc-build/<app>`: the images svc built for an app). */
  listImageTags(repository: string): Promise<string[]>;
  /** Removes one tag; false when it is absent or a container still uses it (never forced). */
  removeImage(tag: string): Promise<boolean>;
}
