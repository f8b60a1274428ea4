// The Runtime port over dockerode (Docker Engine API). Only translation lives here: the decisions are the
// reconcilers'. Expected engine answers are tolerated (a missing container on stop/remove, a stopped one on
// stop, a removal already in progress, a network created concurrently); anything else becomes an Error
// whose message includes the engine's own. Every name and image reference is checked against the
// engine's grammar before it becomes part of a request (references.ts), and the client never follows a
// redirect (docker-client.ts).
import type Docker from 'dockerode';
import { Readable } from 'node:stream';
import type { Logger } from '../log.js';
import { LABELS, NameInUseError, NetworkGoneError, notOurs, NotASwarmError, RemovalInProgressError, type ContainerInfo, type ContainerSpec, type LogLine, type NodeView, type RegistryAuthLookup, type Runtime } from './runtime.js';
import { call, engineError, engineMessage, statusOf } from './docker-errors.js';
import { containerEvents, pastContainerActions } from './docker-events.js';
import { ensureNetworkOnce, NETWORK_GONE_RE } from './docker-network.js';
import { createNetworkCache } from './network-cache.js';
import { createDockerClient } from './docker-client.js';
import { checkContainerRef as ref, checkImageRef } from './references.js';
import { dockerOptions, toContainerInfo, toCreateOptions, type InspectDoc } from './docker-map.js';
import { readContainerDir } from './docker-archive.js';
import { createExecOps } from './docker-exec.js';
import { demuxLines, followProgress } from './docker-streams.js';
import { span } from '../trace.js';

export interface DockerRuntimeOptions {
  /** DOCKER_HOST (unix://, tcp://, http(s)://); default: dockerode's (the DOCKER_HOST env or the socket). */
  dockerHost?: string;
  log: Logger;
  /**
   * This daemon's `svc.instance`: stop and remove touch only containers carrying it, and networks it
   * creates carry it (DESIGN.md rule 14). The daemon always sets it; left out only by test and benchmark
   * tools that clean up what they made themselves.
   */
  instance?: string;
  /** The credentials svc holds for an image's registry (src/desired/registries.ts); absent: anonymous pulls. */
  registryAuth?: RegistryAuthLookup;
}

/** A Runtime that talks to the engine at `dockerHost`; creating it does not connect. */
export function createDockerRuntime(opts: DockerRuntimeOptions): Runtime & { docker: Docker } {
  const docker = createDockerClient(dockerOptions(opts.dockerHost));
  const log = opts.log;
  // Ensured once per process (network-cache.ts); ensureNetworkOnce handles other processes.
  const execOps = createExecOps(docker);
  const networks = createNetworkCache((name) => span('engine', `ensureNetwork ${name}`, () => ensureNetworkOnce(docker, log, name, opts.instance)));

  const inspect = async (nameOrId: string, network?: string): Promise<ContainerInfo | undefined> => {
    const container = docker.getContainer(ref(nameOrId));
    const doc = await call(`inspect ${nameOrId}`, () => container.inspect(), [404]);
    return doc && toContainerInfo(doc as unknown as InspectDoc, network);
  };

  /**
   * The id to act on for a stop or removal: undefined when no such container; throws NotOursError when it
   * is not this instance's. Acting on the id, not the name, means a container created under the same name
   * between the look and the act is never the one stopped or removed.
   */
  const ownedId = async (nameOrId: string, adopted = false): Promise<string | undefined> => {
    if (opts.instance === undefined) return nameOrId;
    const doc = await call(`inspect ${nameOrId}`, () => docker.getContainer(ref(nameOrId)).inspect(), [404]);
    if (!doc) return undefined;
    const err = adopted ? undefined : notOurs(nameOrId, doc.Config?.Labels ?? {}, opts.instance);
    if (err) throw err;
    return doc.Id;
  };

  /** Creates and starts a container; a failed start removes what it created (the name stays free). */
  const createAndStart = async (spec: ContainerSpec): Promise<InspectDoc> => {
    const c = (await call(`create ${spec.name}`, () => docker.createContainer(toCreateOptions(spec))).catch((err: unknown) => {
      throw statusOf(err) === 409 && /already in use/i.test(engineMessage(err)) ? new NameInUseError((err as Error).message) : err;
    }))!;
    try {
      // Engine API 1.41 takes one network at create: the others are joined before the start.
      for (const extra of spec.extraNetworks ?? []) {
        await networks.ensure(extra.name);
        await call(`network connect ${extra.name} ${spec.name}`, () => docker.getNetwork(extra.name).connect({ Container: c.id, EndpointConfig: { Aliases: extra.aliases } }));
      }
      await call(`start ${spec.name}`, () => c.start());
    } catch (err) {
      // Leave nothing half-made behind: the name stays free for the next attempt; the error says why.
      await c.remove({ force: true }).catch(() => {});
      throw err;
    }
    const doc = await call(`inspect ${spec.name}`, () => c.inspect(), [404]);
    if (!doc) throw new Error(`docker run ${spec.name}: container disappeared right after start`);
    return doc as unknown as InspectDoc;
  };

  /** The one engine as a node (a single-host svc has exactly one). */
  const self = async (): Promise<NodeView> => {
    const info = (await call('info', () => docker.info())) as { ID?: string; Name?: string; ServerVersion?: string; NCPU?: number; MemTotal?: number };
    return {
      id: info.ID ?? 'local',
      hostname: info.Name ?? '',
      address: '',
      role: 'manager',
      leader: true,
      availability: 'active',
      state: 'ready',
      labels: {},
      engineVersion: info.ServerVersion ?? '',
      cpus: info.NCPU ?? 0,
      memoryMb: Math.round((info.MemTotal ?? 0) / (1024 * 1024)),
    };
  };

  const runtime: Runtime & { docker: Docker } = {
    docker,

    async nodes() {
      return [await self()];
    },

    async placements() {
      const { id } = await self();
      const label = [`${LABELS.managed}=true`, ...(opts.instance ? [`${LABELS.instance}=${opts.instance}`] : [])];
      const running = (await call('ps', () => docker.listContainers({ filters: { label, status: ['running'] } }))) ?? [];
      const ours = running.filter((c) => c.Labels?.[LABELS.role] === 'app' || c.Labels?.[LABELS.role] === 'service');
      return new Map([[id, ours.map((c) => ({ name: (c.Names?.[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }))]]);
    },

    async updateNode() {
      throw new NotASwarmError('changing a node');
    },

    async joinInfo() {
      throw new NotASwarmError('joining a node');
    },

    // One engine: every container's data is on this host's disk.
    async dataNodeOf() {
      return undefined;
    },

    async newServiceDataNode() {
      return undefined;
    },

    async openNodeDisk() {
      throw new NotASwarmError("writing another node's disk");
    },

    readDir(nameOrId, path) {
      return readContainerDir(docker, nameOrId, path);
    },

    async ping() {
      try {
        await docker.ping();
        return true;
      } catch {
        return false;
      }
    },

    async listNetworks(prefix) {
      const list = (await call('network ls', () => docker.listNetworks({ filters: { label: [opts.instance ? `svc.instance=${opts.instance}` : 'svc.managed=true'] } }))) ?? [];
      return list.map((n) => n.Name).filter((n) => n.startsWith(prefix)).sort();
    },

    async deleteNetwork(name) {
      const list = (await call(`network ls ${name}`, () => docker.listNetworks({ filters: { name: [name], label: [opts.instance ? `svc.instance=${opts.instance}` : 'svc.managed=true'] } }))) ?? [];
      for (const n of list.filter((x) => x.Name === name)) {
        await call(`network rm ${name}`, () => docker.getNetwork(n.Id).remove(), [404]);
        networks.forget(name);
      }
    },

    ensureNetwork(name) {
      return networks.ensure(name);
    },

    async list(labels, network) {
      const label = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
      const summaries = await call('ps', () => docker.listContainers({ all: true, filters: { label } }));
      const infos = await Promise.all((summaries ?? []).map((s) => inspect(s.Id, network)));
      return infos.filter((i): i is ContainerInfo => i !== undefined); // removed between list and inspect
    },

    inspect,

    async run(spec) {
      ref(spec.name);
      checkImageRef(spec.image);
      const joinsNetwork = !!spec.network && !spec.hostNetwork;
      let doc: InspectDoc;
      try {
        doc = await createAndStart(spec);
      } catch (err) {
        // The network was removed behind svc's back since it was ensured: make it again, then once more.
        if (!joinsNetwork || statusOf(err) !== 404 || !NETWORK_GONE_RE.test(engineMessage(err))) throw err;
        if (!networks.forget(spec.network!)) throw err; // not one this runtime made sure of
        log.info('network gone; creating it again', { network: spec.network });
        await networks.ensure(spec.network!);
        doc = await createAndStart(spec);
      }
      // Joined another network of that name than the one ensured (recreated by someone else): tune that one.
      if (joinsNetwork) await networks.joined(spec.network!, doc.NetworkSettings?.Networks?.[spec.network!]?.NetworkID);
      return toContainerInfo(doc, spec.network);
    },

    async start(nameOrId) {
      const container = docker.getContainer(ref(nameOrId));
      try {
        await call(`start ${nameOrId}`, () => container.start(), [304]);
      } catch (err) {
        // The engine names the gone network by its old id only: forget every network ensured, so the
        // caller's next ensure asks the engine again (and makes it), then the caller recreates the container.
        if (statusOf(err) !== 404 || !NETWORK_GONE_RE.test(engineMessage(err))) throw err;
        networks.forgetAll();
        throw new NetworkGoneError((err as Error).message);
      }
    },

    async stop(nameOrId, graceSeconds, o) {
      const id = await ownedId(nameOrId, o?.adopted);
      if (id === undefined) return;
      const container = docker.getContainer(ref(id));
      await call(`stop ${nameOrId}`, () => container.stop({ t: graceSeconds }), [304, 404]);
    },

    async remove(nameOrId) {
      const id = await ownedId(nameOrId);
      if (id === undefined) return;
      const container = docker.getContainer(ref(id));
      try {
        await span('engine', `remove ${nameOrId}`, () => container.remove({ force: true }));
      } catch (err) {
        const status = statusOf(err);
        if (status === 404) return;
        if (status === 409 && /already in progress/i.test(engineMessage(err))) throw new RemovalInProgressError(nameOrId);
        throw engineError(`remove ${nameOrId}`, err);
      }
    },

    ...execOps,

    async *logs(nameOrId, o): AsyncGenerator<LogLine> {
      const op = `logs ${nameOrId}`;
      const base = { stdout: true, stderr: true, timestamps: true, tail: o.tail ?? 'all', abortSignal: o.signal };
      const container = docker.getContainer(ref(nameOrId));
      let stream: Readable;
      try {
        const got: unknown = o.follow
          ? await container.logs({ ...base, follow: true } as never)
          : await container.logs({ ...base, follow: false } as never);
        stream = Buffer.isBuffer(got) ? Readable.from([got]) : (got as Readable);
      } catch (err) {
        if (o.signal?.aborted) return;
        throw engineError(op, err);
      }
      yield* demuxLines(docker.modem, stream, o.signal);
    },

    events(signal, o) {
      return containerEvents(docker, signal, o?.onConnected);
    },

    pastActions(containerId, sinceMs) {
      return pastContainerActions(docker, containerId, sinceMs);
    },

    async listImageTags(repository) {
      checkImageRef(repository);
      const found = (await call(`image list ${repository}`, () => docker.listImages({ filters: { reference: [repository] } }))) ?? [];
      return found.flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith(`${repository}:`));
    },

    async removeImage(tag) {
      checkImageRef(tag);
      return (await call(`image remove ${tag}`, () => docker.getImage(tag).remove(), [404, 409])) !== undefined;
    },

    async hasImage(image) {
      checkImageRef(image);
      return (await call(`image inspect ${image}`, () => docker.getImage(image).inspect(), [404])) !== undefined;
    },

    async imageUser(image) {
      checkImageRef(image);
      const info = (await call(`image inspect ${image}`, () => docker.getImage(image).inspect(), [404])) as { Config?: { User?: string } } | undefined;
      return info?.Config?.User?.trim() || undefined;
    },

    async pull(image, onProgress) {
      const op = `pull ${checkImageRef(image)}`;
      // With credentials the engine gets them as X-Registry-Auth for this pull only (dockerode's `auth`).
      const auth = opts.registryAuth?.(image);
      const stream = (await call(op, () => (auth ? docker.pull(image, {}, undefined as never, auth) : docker.pull(image)) as Promise<Readable>))!;
      try {
        await followProgress(stream, (m) => {
          if (m.status) onProgress?.({ status: m.status, id: m.id, progress: m.progress });
        });
      } catch (err) {
        throw engineError(op, err);
      }
    },

    async registryLogin(auth) {
      const answer = (await call(`login ${auth.serveraddress}`, () => docker.checkAuth(auth) as Promise<{ Status?: string }>))!;
      return answer?.Status || 'Login Succeeded';
    },

    async build(contextDir, tag, onLog, signal) {
      const op = `build ${checkImageRef(tag)}`;
      const { create: tarCreate } = await import('tar'); // loaded at the first build only
      const context = Readable.from(tarCreate({ cwd: contextDir, portable: true }, ['.']));
      const stream = (await call(op, () => docker.buildImage(context as never, { t: tag, rm: true, forcerm: true, abortSignal: signal } as Docker.ImageBuildOptions)))!;
      try {
        await followProgress(stream as Readable, (m) => {
          if (m.stream) for (const line of m.stream.split('\n')) if (line.trim()) onLog?.(line.replace(/\r$/, ''));
        });
      } catch (err) {
        throw engineError(op, err);
      }
    },
  };
  return runtime;
}
