// An in-memory Runtime for reconciler unit tests (DESIGN.md rule 8: small fakes of our own ports, no
// vi.mock). It keeps containers in a map, records every call, assigns addresses 10.0.0.N, emits the
// container events the engine would (start, die, stop, destroy, ...), and lets a test simulate a crash
// (`kill`), an image that exits or turns unhealthy, a failing pull, or the engine going away.
import { writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  DataNode,
  NodeDisk,
  RegistryAuth,
  ContainerInfo,
  ContainerSpec,
  ExecResult,
  LogLine,
  NodeChange,
  NodeView,
  PullProgress,
  Runtime,
  RuntimeEvent,
} from '../../src/runtime/runtime.js';
import { NameInUseError, NetworkGoneError, NoSuchNodeError, NotASwarmError, notOurs } from '../../src/runtime/runtime.js';

/** How a container of an image behaves after start: keeps running, exits at once with 1, or is unhealthy. */
export type ImageBehaviour = 'runs' | 'exits' | 'unhealthy' | 'healthy';

export interface FakeContainer {
  id: string;
  spec: ContainerSpec;
  state: ContainerInfo['state'];
  exitCode?: number;
  /** Set by oom(); cleared by the next start, as the engine does. */
  oomKilled?: boolean;
  /** Set by oomOnWorker() (a Swarm task on another node: only suspected); cleared by the next start. */
  oomLikely?: boolean;
  /** Set by shutDownBySwarm() (a drain); cleared by the next start. */
  shutDownBySwarm?: boolean;
  /** The image id it was made from, when the test gave its image one (setImageId). */
  imagePin?: string;
  health: ContainerInfo['health'];
  address?: string;
  startedAt?: string;
  finishedAt?: string;
  logs: LogLine[];
}

export interface FakeCall {
  method: keyof Runtime;
  args: unknown[];
}

export interface FakeRuntimeOptions {
  /** Images present at start (pull or build adds more). */
  images?: string[];
  /** run() of an image not present fails like the engine does (default true). */
  strictImages?: boolean;
  /** Clock for startedAt/finishedAt/log times (default the real one), so a test's fake time agrees. */
  now?: () => number;
  /** As the Docker adapter's: stop and remove touch only containers labelled with it (unset: any). */
  instance?: string;
}

/** Thrown by every method while the fake engine is unreachable. */
export class FakeEngineDown extends Error {
  constructor() {
    super('connect ENOENT /var/run/docker.sock');
  }
}

export class FakeRuntime implements Runtime {
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Set<string>();
  readonly calls: FakeCall[] = [];
  readonly networks = new Set<string>();
  /** Per-image behaviour after start; default 'runs'. */
  readonly behaviour = new Map<string, ImageBehaviour>();
  /** When set, pull() of a ref (or of every ref, key '*') rejects with this message. */
  readonly pullFailures = new Map<string, string>();
  /** Answers exec(); default exit 0 with empty output. */
  execHandler: (name: string, cmd: string[]) => ExecResult = () => ({ exitCode: 0, stdout: '', stderr: '' });
  reachable = true;
  /** Image ref -> the id its tag names now (setImageId); refs without one give their containers no pin. */
  readonly imageIds = new Map<string, string>();
  /** Every image id given, -> its ref: an id stays present after its tag moves (a dangling image). */
  private readonly refOfId = new Map<string, string>();
  private nextAddress = 2;
  private nextId = 1;
  private subscribers = new Set<{ push(ev: RuntimeEvent | null): void }>();
  /** Every event emitted, with the fake time: the engine's event history (pastActions). */
  readonly history: { at: number; id: string; action: string }[] = [];
  private readonly strictImages: boolean;
  private readonly now: () => number;
  private readonly instance?: string;

  constructor(opts: FakeRuntimeOptions = {}) {
    this.instance = opts.instance;
    for (const i of opts.images ?? []) this.images.add(i);
    this.strictImages = opts.strictImages ?? true;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Makes `ref` present and names `id` as the image its tag points at now; called again for the same ref,
   * the tag moves (`docker pull web:latest` of newer content) and the old id stays present, untagged.
   */
  setImageId(ref: string, id: string): void {
    this.images.add(ref);
    this.imageIds.set(ref, id);
    this.refOfId.set(id, ref);
  }

  /** The image `id` is removed from the engine (`docker rmi` of a dangling image). */
  dropImageId(id: string): void {
    this.refOfId.delete(id);
    for (const [ref, now] of this.imageIds) if (now === id) this.imageIds.delete(ref);
  }

  /** The machines: one engine by default; a test of Swarm behaviour sets several and `swarm = true`. */
  nodeList: NodeView[] = [
    { id: 'local', hostname: 'host', address: '', role: 'manager', leader: true, availability: 'active', state: 'ready', labels: {}, engineVersion: '20.10.24', cpus: 2, memoryMb: 4096 },
  ];
  /** Whether node operations are a Swarm's (else they throw NotASwarmError, as the docker runtime does). */
  swarm = false;
  /** Container name -> node id; a running container not listed runs on the first node. */
  readonly placedOn = new Map<string, string>();

  /** Container name -> the node other than this host holding its data (a service pinned to a worker). */
  readonly dataNodes = new Map<string, DataNode>();
  /** Where a managed service created now would hold its data (a labelled worker); undefined: here. */
  newServicesOn: DataNode | undefined;
  /** Container name -> the tar bytes readDir answers for it (Docker's archive endpoint's). */
  readonly dirArchives = new Map<string, Buffer>();

  /** Node id -> a host directory standing for that node's data directory (openNodeDisk works on it). */
  readonly nodeDisks = new Map<string, string>();
  /** Helpers open now (tags), for "nothing left behind". */
  readonly openDisks = new Set<string>();
  /** When set, the node-disk step whose `<op> <path>` matches throws (a fault mid-restore). */
  nodeDiskFault: RegExp | undefined;

  async openNodeDisk(node: DataNode, _dataDir: string, tag: string): Promise<NodeDisk> {
    this.record('openNodeDisk', [node.id, tag]);
    const root = this.nodeDisks.get(node.id);
    if (!root) throw new Error(`the agent of node ${node.hostname} is not running yet`);
    this.openDisks.add(tag);
    const at = (rel: string) => join(root, rel);
    const step = (op: string, rel: string) => {
      if (this.nodeDiskFault?.test(`${op} ${rel}`)) throw new Error(`${op} ${rel} on node ${node.hostname} failed (injected)`);
    };
    return {
      exists: async (rel) => existsSync(at(rel)),
      mkdir: async (rel) => {
        step('mkdir', rel);
        await mkdir(at(rel), { recursive: true, mode: 0o700 });
      },
      own: async (rel, uid, gid, mode) => {
        step('own', rel);
        await chown(at(rel), uid, gid ?? -1);
        await chmod(at(rel), mode);
      },
      writeFile: async (rel, content, mode) => {
        step('write', rel);
        await writeFile(at(rel), content, { mode });
        await chmod(at(rel), mode);
      },
      rename: async (from, to) => {
        step('rename', `${from} ${to}`);
        if (existsSync(at(to))) throw new Error(`${to} exists`);
        await rename(at(from), at(to));
      },
      remove: async (rel) => {
        step('remove', rel);
        await rm(at(rel), { recursive: true, force: true });
      },
      unpack: async (rel, tar) => {
        step('unpack', rel);
        const { x } = await import('tar');
        await pipeline(tar as Readable, x({ cwd: at(rel) }) as unknown as NodeJS.WritableStream);
      },
      close: async () => {
        this.openDisks.delete(tag);
      },
    };
  }

  async dataNodeOf(nameOrId: string) {
    this.record('dataNodeOf', [nameOrId]);
    return this.dataNodes.get(nameOrId);
  }

  async newServiceDataNode() {
    this.record('newServiceDataNode', []);
    return this.newServicesOn;
  }

  async readDir(nameOrId: string, path: string): Promise<NodeJS.ReadableStream> {
    this.record('readDir', [nameOrId, path]);
    const tar = this.dirArchives.get(nameOrId);
    if (!tar) throw new Error(`No such container: ${nameOrId}`);
    return Readable.from([tar]);
  }

  async nodes(): Promise<NodeView[]> {
    this.record('nodes', []);
    return structuredClone(this.nodeList);
  }

  async placements(): Promise<Map<string, { name: string; labels: Record<string, string> }[]>> {
    this.record('placements', []);
    const out = new Map<string, { name: string; labels: Record<string, string> }[]>();
    for (const c of this.containers.values()) {
      const role = c.spec.labels['svc.role'];
      if (c.state !== 'running' || (role !== 'app' && role !== 'service')) continue;
      const node = this.placedOn.get(c.spec.name) ?? this.nodeList[0]!.id;
      out.set(node, [...(out.get(node) ?? []), { name: c.spec.name, labels: c.spec.labels }]);
    }
    return out;
  }

  async updateNode(id: string, change: NodeChange): Promise<NodeView> {
    this.record('updateNode', [id, change]);
    if (!this.swarm) throw new NotASwarmError('changing a node');
    const n = this.nodeList.find((x) => x.id === id || x.hostname === id);
    if (!n) throw new NoSuchNodeError(id);
    if (change.availability) n.availability = change.availability;
    if (change.labels) n.labels = { ...change.labels };
    return structuredClone(n);
  }

  async joinInfo(role: 'worker' | 'manager'): Promise<{ token: string; address: string }> {
    this.record('joinInfo', [role]);
    if (!this.swarm) throw new NotASwarmError('joining a node');
    return { token: `SWMTKN-1-fake-${role}`, address: '10.1.0.11:2377' };
  }

  // ---- test controls -------------------------------------------------------------------------------

  /** Simulates a crash: the container exits with `exitCode` (default 137) and a `die` event is sent. */
  kill(name: string, exitCode = 137): void {
    const c = this.must(name);
    this.exit(c, exitCode);
  }

  /** `docker kill` by someone else: the engine records `kill`, then the container dies with 137. */
  killFromOutside(name: string): void {
    const c = this.must(name);
    this.emit(c, 'kill');
    this.exit(c, 137);
  }

  /** Simulates a kill for memory: an `oom` event, then exit 137 with `oomKilled` (as the engine reports it). */
  oom(name: string): void {
    const c = this.must(name);
    c.oomKilled = true;
    this.emit(c, 'oom');
    this.exit(c, 137);
  }

  /** A Swarm task on a worker killed for memory: exit 137 that the runtime can only suspect (`oomLikely`). */
  oomOnWorker(name: string): void {
    const c = this.must(name);
    c.oomLikely = true;
    this.exit(c, 137);
  }

  /**
   * A Swarm drain of the node running it: the orchestrator stops the task (exit 0 on SIGTERM). Swarm's
   * events never reach the manager's engine history; the runtime itself reports it stopped from outside.
   */
  shutDownBySwarm(name: string): void {
    const c = this.must(name);
    c.shutDownBySwarm = true;
    this.exit(c, 0);
  }

  /** Sets the health a container reports and emits `health_status`. */
  setHealth(name: string, health: ContainerInfo['health']): void {
    const c = this.must(name);
    c.health = health;
    this.emit(c, `health_status: ${health}`);
  }

  /** Appends a log line a container "printed". */
  log(name: string, line: string, stream: LogLine['stream'] = 'stdout'): void {
    this.must(name).logs.push({ stream, line, time: new Date(this.now()).toISOString() });
  }

  /** Engine goes away (every call fails, event streams end with an error) or comes back. */
  setReachable(up: boolean): void {
    this.reachable = up;
    if (!up) for (const s of [...this.subscribers]) s.push(null);
  }

  /** Sends an arbitrary event to every subscriber. */
  emitRaw(ev: RuntimeEvent): void {
    for (const s of this.subscribers) s.push(ev);
  }

  /** How many event subscriptions are open. */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Names of calls made, in order, optionally of one method. */
  callsOf(method: keyof Runtime): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  // ---- Runtime -------------------------------------------------------------------------------------

  async ping() {
    this.record('ping', []);
    return this.reachable;
  }

  async ensureNetwork(name: string) {
    this.record('ensureNetwork', [name]);
    this.networks.add(name);
    this.removedNetworks.delete(name);
  }

  async listNetworks(prefix: string) {
    this.record('listNetworks', [prefix]);
    return [...this.networks].filter((n) => n.startsWith(prefix)).sort();
  }

  async deleteNetwork(name: string) {
    this.record('deleteNetwork', [name]);
    this.networks.delete(name);
  }

  /** Networks removed behind svc's back (`docker network rm`) and not ensured since. */
  readonly removedNetworks = new Set<string>();
  /** Containers attached to a network that was removed since: their start fails as the engine's does. */
  private readonly cutOff = new Set<string>();

  /** `docker network rm name` while its containers are stopped: they can never start again. */
  removeNetwork(name: string): void {
    this.networks.delete(name);
    this.removedNetworks.add(name);
    for (const c of this.containers.values()) if (c.spec.network === name && !c.spec.hostNetwork) this.cutOff.add(c.id);
  }

  async list(labels: Record<string, string>, network?: string) {
    this.record('list', [labels, network]);
    return [...this.containers.values()]
      .filter((c) => Object.entries(labels).every(([k, v]) => c.spec.labels[k] === v))
      .map((c) => this.info(c, network));
  }

  async inspect(nameOrId: string, network?: string) {
    this.record('inspect', [nameOrId, network]);
    const c = this.find(nameOrId);
    return c && this.info(c, network);
  }

  async run(spec: ContainerSpec) {
    this.record('run', [spec]);
    if (this.find(spec.name)) throw new NameInUseError(`Conflict. The container name "/${spec.name}" is already in use`);
    if (spec.network && !spec.hostNetwork && this.removedNetworks.has(spec.network)) throw new Error(`docker create ${spec.name}: network ${spec.network} not found`);
    const byId = this.refOfId.has(spec.image);
    if (this.strictImages && !this.images.has(spec.image) && !byId) throw new Error(`No such image: ${spec.image}`);
    const c: FakeContainer = { id: `fake${this.nextId++}`, spec, state: 'created', health: 'none', logs: [] };
    const pin = byId ? spec.image : this.imageIds.get(spec.image);
    if (pin) c.imagePin = pin;
    if (spec.network && !spec.hostNetwork) c.address = `10.0.0.${this.nextAddress++}`;
    this.containers.set(spec.name, c);
    this.emit(c, 'create');
    this.begin(c);
    return this.info(c, spec.network);
  }

  async start(nameOrId: string) {
    this.record('start', [nameOrId]);
    const c = this.find(nameOrId);
    if (!c) throw new Error(`No such container: ${nameOrId}`);
    if (c.state === 'removing' || c.state === 'dead') throw new Error(`container ${c.id} is marked for removal and cannot be started`);
    if (c.state !== 'running' && this.cutOff.has(c.id)) throw new NetworkGoneError(`docker start ${nameOrId}: network 0f${c.id} not found`);
    if (c.state !== 'running') this.begin(c);
  }

  async stop(nameOrId: string, graceSeconds: number, opts?: { adopted?: boolean }) {
    this.record('stop', [nameOrId, graceSeconds]);
    const c = this.find(nameOrId);
    if (c && !opts?.adopted) this.mustBeOurs(nameOrId, c);
    if (!c || c.state !== 'running') return;
    this.emit(c, 'kill');
    this.exit(c, 0);
    this.emit(c, 'stop');
  }

  async remove(nameOrId: string) {
    this.record('remove', [nameOrId]);
    const c = this.find(nameOrId);
    if (!c) return;
    this.mustBeOurs(nameOrId, c);
    if (c.state === 'running') this.exit(c, 137);
    this.containers.delete(c.spec.name);
    this.emit(c, 'destroy');
  }

  async exec(nameOrId: string, cmd: string[], opts?: { env?: Record<string, string>; user?: string }) {
    this.record('exec', [nameOrId, cmd, opts]);
    const c = this.find(nameOrId);
    if (!c) throw new Error(`No such container: ${nameOrId}`);
    if (c.state !== 'running') throw new Error(`Container ${c.id} is not running`);
    return this.execHandler(c.spec.name, cmd);
  }

  async execToFile(nameOrId: string, cmd: string[], path: string, opts?: { env?: Record<string, string>; user?: string }) {
    const { exitCode, stdout, stderr } = await this.exec(nameOrId, cmd, opts);
    await writeFile(path, stdout, { flag: 'wx', mode: 0o600 });
    return { exitCode, stderr };
  }

  async *logs(nameOrId: string, opts: { follow: boolean; tail?: number; signal?: AbortSignal }): AsyncIterable<LogLine> {
    this.record('logs', [nameOrId, { follow: opts.follow, tail: opts.tail }]);
    this.up();
    const c = this.find(nameOrId);
    if (!c) throw new Error(`No such container: ${nameOrId}`);
    const lines = opts.tail === undefined ? c.logs : c.logs.slice(-opts.tail);
    for (const l of lines) {
      if (opts.signal?.aborted) return;
      yield l;
    }
  }

  events(signal: AbortSignal, opts?: { onConnected?: () => void }): AsyncIterable<RuntimeEvent> {
    this.record('events', []);
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        self.up();
        const buffered: (RuntimeEvent | null)[] = [];
        let wake: (() => void) | undefined;
        const sub = {
          push(ev: RuntimeEvent | null) {
            buffered.push(ev);
            wake?.();
          },
        };
        const onAbort = () => wake?.();
        self.subscribers.add(sub);
        signal.addEventListener('abort', onAbort);
        opts?.onConnected?.();
        try {
          while (!signal.aborted) {
            if (buffered.length === 0) await new Promise<void>((r) => (wake = r));
            wake = undefined;
            while (buffered.length && !signal.aborted) {
              const ev = buffered.shift()!;
              if (ev === null) throw new Error('unexpected EOF from the engine');
              yield ev;
            }
          }
        } finally {
          self.subscribers.delete(sub);
          signal.removeEventListener('abort', onAbort);
        }
      },
    };
  }

  async pastActions(containerId: string, sinceMs: number) {
    this.record('pastActions', [containerId, sinceMs]);
    return this.history.filter((e) => e.id === containerId && e.at >= sinceMs).map((e) => e.action);
  }

  async listImageTags(repository: string) {
    this.record('listImageTags', [repository]);
    return [...this.images].filter((i) => i.startsWith(`${repository}:`));
  }

  async removeImage(tag: string) {
    this.record('removeImage', [tag]);
    return this.images.delete(tag);
  }

  async hasImage(ref: string) {
    this.record('hasImage', [ref]);
    return this.images.has(ref) || this.refOfId.has(ref);
  }

  /** Image ref -> its `Config.User` (absent: root). */
  readonly imageUsers = new Map<string, string>();

  async imageUser(ref: string) {
    this.record('imageUser', [ref]);
    return this.images.has(ref) ? this.imageUsers.get(ref) : undefined;
  }

  /** Registry logins that fail, by server, with the message the engine would give. */
  readonly loginFailures = new Map<string, string>();

  async registryLogin(auth: RegistryAuth) {
    this.record('registryLogin', [auth.serveraddress, auth.username]);
    const failure = this.loginFailures.get(auth.serveraddress);
    if (failure) throw new Error(failure);
    return 'Login Succeeded';
  }

  async pull(ref: string, onProgress?: (p: PullProgress) => void) {
    this.record('pull', [ref]);
    const failure = this.pullFailures.get(ref) ?? this.pullFailures.get('*');
    if (failure) throw new Error(failure);
    onProgress?.({ status: `Pulling from ${ref}` });
    this.images.add(ref);
    onProgress?.({ status: `Status: Downloaded newer image for ${ref}` });
  }

  async build(contextDir: string, tag: string, onLog?: (line: string) => void) {
    this.record('build', [contextDir, tag]);
    onLog?.(`Successfully tagged ${tag}`);
    this.images.add(tag);
  }

  // ---- internals -----------------------------------------------------------------------------------

  private record(method: keyof Runtime, args: unknown[]) {
    this.calls.push({ method, args });
    if (method !== 'ping' && method !== 'events' && method !== 'logs') this.up();
  }

  private up() {
    if (!this.reachable) throw new FakeEngineDown();
  }

  private find(nameOrId: string): FakeContainer | undefined {
    const byName = this.containers.get(nameOrId.replace(/^\//, ''));
    if (byName) return byName;
    for (const c of this.containers.values()) if (c.id === nameOrId) return c;
    return undefined;
  }

  private mustBeOurs(nameOrId: string, c: FakeContainer) {
    const err = this.instance === undefined ? undefined : notOurs(nameOrId, c.spec.labels, this.instance);
    if (err) throw err;
  }

  private must(name: string): FakeContainer {
    const c = this.find(name);
    if (!c) throw new Error(`fake runtime: no container ${name}`);
    return c;
  }

  private begin(c: FakeContainer) {
    const b = this.behaviour.get(c.spec.image) ?? this.behaviour.get(this.refOfId.get(c.spec.image) ?? '') ?? 'runs';
    c.state = 'running';
    c.exitCode = undefined;
    c.oomKilled = undefined;
    c.oomLikely = undefined;
    c.shutDownBySwarm = undefined;
    c.startedAt = new Date(this.now()).toISOString();
    c.health = b === 'unhealthy' ? 'unhealthy' : b === 'healthy' ? 'healthy' : 'none';
    this.emit(c, 'start');
    if (b === 'exits') this.exit(c, 1);
  }

  private exit(c: FakeContainer, exitCode: number) {
    c.state = 'exited';
    c.exitCode = exitCode;
    c.finishedAt = new Date(this.now()).toISOString();
    this.emit(c, 'die');
  }

  private emit(c: FakeContainer, action: string) {
    this.history.push({ at: this.now(), id: c.id, action });
    this.emitRaw({ action, id: c.id, name: c.spec.name, labels: { ...c.spec.labels } });
  }

  private info(c: FakeContainer, network?: string): ContainerInfo {
    const running = c.state === 'running';
    const onNetwork = network === undefined || network === c.spec.network;
    return {
      id: c.id,
      name: c.spec.name,
      image: c.spec.image,
      ...(c.imagePin ? { imagePin: c.imagePin } : {}),
      labels: { ...c.spec.labels },
      state: c.state,
      running,
      exitCode: c.exitCode,
      oomKilled: c.oomKilled || undefined,
      ...(c.oomLikely ? { oomLikely: true } : {}),
      ...(c.shutDownBySwarm && !running ? { stoppedFromOutside: true } : {}),
      address: running && onNetwork ? c.address : undefined,
      health: c.health,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
    };
  }
}
