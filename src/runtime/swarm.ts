// SVC_RUNTIME=swarm: the Runtime port over a Docker Swarm, driven through the manager's Engine API (the
// engine svc runs beside). Apps' and managed services' containers become Swarm services of one replica
// (swarm-spec.ts says why), so Swarm picks the node and svc keeps every decision it makes on one host:
// health checks, the switch, healing with backoff, flip-back. Everything else (the proxy container, build
// helpers, images) is the manager's local engine, through the docker runtime; an exec into a task on
// another node goes to that node's engine through its agent (swarm-agents.ts). Nothing outside
// src/runtime knows which of the two it has.
import type Docker from 'dockerode';
import { Readable } from 'node:stream';
import type { Logger } from '../log.js';
import { createDockerRuntime } from './docker.js';
import { call, engineError, statusOf } from './docker-errors.js';
import { LABELS, NameInUseError, type DataNode, NoSuchNodeError, notOurs, type ContainerInfo, type ContainerSpec, type RegistryAuthLookup, type Runtime, type RuntimeEvent } from './runtime.js';
import { checkContainerRef as ref, checkImageRef } from './references.js';
import { constrainedNode, dataTask, pinnedNode, placementConstraints, toServiceSpec } from './swarm-spec.js';
import { readContainerDir } from './docker-archive.js';
import { openNodeDisk } from './swarm-node-disk.js';
import { currentTask, oomVerdict, toContainerInfoFromTask, toNodeView, type NodeDoc, type ServiceDoc, type TaskDoc } from './swarm-map.js';
import { watchSwarm } from './swarm-watch.js';
import { demuxLines, followProgress } from './docker-streams.js';
import { createExecOps, type ExecOps } from './docker-exec.js';
import { agentFailure, type NodeAgents } from './swarm-agents.js';

/** Roles that run as Swarm services; the rest (proxy, build, probe helper) are local containers. */
const SERVICE_ROLES = new Set(['app', 'service']);
/** Label Swarm puts on a task's container: such a container is a service's, never listed as one of ours. */
const SWARM_SERVICE_LABEL = 'com.docker.swarm.service.id';
/** How long `run` and `start` wait for the task to run (an image pull on a worker included). */
const TASK_WAIT_MS = 60_000;
/** How long a replica waits for its task to be given a node before the next replica of its deploy is placed. */
const PLACE_WAIT_MS = 5_000;

export interface SwarmRuntimeOptions {
  dockerHost?: string;
  log: Logger;
  instance: string;
  /** How often the task watcher compares the services' tasks (events for tasks on other nodes). */
  watchIntervalMs?: number;
  /**
   * SVC_REGISTRY (`host[:port][/path]`): svc_build images are pushed there after the build and services
   * run them from there, so every node can pull them. Without it a built image exists on the manager only.
   */
  registry?: string;
  /**
   * Without `registry`: starts svc's own registry on the manager (src/cluster/registry.ts) given the
   * manager's Swarm address, resolving with its `host:port`. Asked at the first build or run of a svc_build
   * image. Absent: built images stay on the manager.
   */
  ownRegistry?: (managerAddress: string) => Promise<string>;
  /** The credentials svc holds for an image's registry: the manager's pulls and every node's (service create). */
  registryAuth?: RegistryAuthLookup;
  /**
   * Other nodes' engines, through their agents (swarm-agents.ts): exec into a task elsewhere. Absent:
   * only tasks on the manager can be reached.
   */
  agents?: Pick<NodeAgents, 'client'>;
  /** An image with /bin/busybox (SVC_PROBE_IMAGE): the helper that writes another node's disk in a restore. */
  diskImage?: string;
}

export interface SwarmRuntime extends Runtime {
  docker: Docker;
  /** This engine's node id (the manager svc runs on). */
  selfNodeId(): Promise<string>;
  /** Where the nodes pull an image svc built (`svc-build/...`): its name in the registry `build` pushes it to. */
  clusterImage(tag: string): Promise<string>;
}

export function createSwarmRuntime(opts: SwarmRuntimeOptions): SwarmRuntime {
  const local = createDockerRuntime({ dockerHost: opts.dockerHost, log: opts.log, instance: opts.instance, registryAuth: opts.registryAuth });
  const docker = local.docker;
  let selfId: string | undefined;

  const selfNodeId = async () => {
    if (selfId) return selfId;
    const info = (await call('info', () => docker.info())) as { Swarm?: { NodeID?: string; LocalNodeState?: string } };
    if (!info.Swarm?.NodeID) throw new Error('SVC_RUNTIME=swarm: this engine is not part of a Swarm (run `docker swarm init` on it first)');
    selfId = info.Swarm.NodeID;
    return selfId;
  };

  let own: Promise<string> | undefined;
  /** The registry a svc_build image goes through: SVC_REGISTRY, else svc's own (started on demand). */
  const registryFor = async (image: string): Promise<string | undefined> => {
    if (opts.registry || !opts.ownRegistry || !image.startsWith('svc-build/')) return opts.registry;
    own ??= (async () => {
      const info = (await call('info', () => docker.info())) as { Swarm?: { NodeAddr?: string } };
      if (!info.Swarm?.NodeAddr) throw new Error('SVC_RUNTIME=swarm: this engine reports no Swarm address for the registry');
      return opts.ownRegistry!(info.Swarm.NodeAddr);
    })().catch((err) => {
      own = undefined; // asked again at the next build
      throw err;
    });
    return own;
  };

  const nodeDocs = async () => ((await call('node ls', () => docker.listNodes())) ?? []) as NodeDoc[];
  const downNodes = (nodes: NodeDoc[]) => new Set(nodes.filter((n) => n.Status?.State !== 'ready').map((n) => n.ID));

  const serviceDoc = async (nameOrId: string): Promise<(ServiceDoc & { Version: { Index: number }; Spec: Record<string, unknown> & ServiceDoc['Spec'] }) | undefined> =>
    (await call(`service inspect ${nameOrId}`, () => docker.getService(ref(nameOrId)).inspect(), [404])) as never;

  const tasksOf = async (serviceId: string) => ((await call('task ls', () => docker.listTasks({ filters: { service: [serviceId] } }))) ?? []) as TaskDoc[];

  /** The task as a container, with what can be known of an exit 137 (swarm-map.ts `oomVerdict`). */
  const describe = async (svc: ServiceDoc, task: TaskDoc | undefined, network: string | undefined, nodes: NodeDoc[]): Promise<ContainerInfo> => {
    const info = toContainerInfoFromTask(svc, task, { network, downNodes: downNodes(nodes) });
    if (info.state !== 'exited' || info.exitCode !== 137 || !task) return info;
    const verdict = oomVerdict({ exitCode: 137, taskState: task.Status?.State, memoryLimitBytes: svc.Spec.TaskTemplate?.Resources?.Limits?.MemoryBytes, engineSays: await oomKilledWhereItRan(task) });
    return { ...info, ...verdict };
  };

  /**
   * State.OOMKilled of a task's container, from the engine that ran it: this one, or another node's through
   * its agent (an inspect, the one read an agent passes). Undefined when that engine cannot be asked.
   */
  const oomKilledWhereItRan = async (task: TaskDoc): Promise<boolean | undefined> => {
    const containerId = task.Status?.ContainerStatus?.ContainerID;
    if (!containerId || !task.NodeID) return undefined;
    if (task.NodeID === (await selfNodeId())) {
      const here = await local.inspect(containerId).catch(() => undefined);
      return here ? here.oomKilled === true : undefined;
    }
    if (!opts.agents) return undefined;
    try {
      const doc = (await (await opts.agents.client(task.NodeID)).getContainer(containerId).inspect()) as { State?: { OOMKilled?: boolean } };
      return doc.State?.OOMKilled === true;
    } catch {
      return undefined; // the agent not running, the container gone: only a suspicion is left
    }
  };

  const infoOf = async (svc: ServiceDoc, network: string | undefined, nodes?: NodeDoc[]) => describe(svc, currentTask(await tasksOf(svc.ID)), network, nodes ?? (await nodeDocs()));

  /**
   * Where the task may run: pinned where its data is (swarm-spec.ts `pinnedNode`), else away from the
   * running replicas of the same app and deploy (spread: at most one per node). `current`: the service's
   * constraints now, when it is healed.
   */
  const constraintsFor = async (spec: ContainerSpec, nodes: NodeDoc[], current?: string[]): Promise<string[]> => {
    const role = spec.labels[LABELS.role];
    // The disk prepared for it decides (a managed service's first directory), not the labels a moment later.
    const prepared = spec.dataNode === 'here' ? await selfNodeId() : spec.dataNode?.id;
    const pin = prepared ?? pinnedNode({ role, hasMounts: (spec.mounts?.length ?? 0) > 0, managerId: await selfNodeId(), nodes: nodes.map((n) => ({ id: n.ID, labels: n.Spec?.Labels ?? {} })), current });
    if (pin) return placementConstraints({ nodes: [], siblingNodes: [], pinnedNode: pin });
    const app = spec.labels[LABELS.app];
    const deploy = spec.labels[LABELS.deploy];
    const siblings: string[] = [];
    if (app && deploy) {
      const filters = { label: [`${LABELS.instance}=${opts.instance}`, `${LABELS.app}=${app}`, `${LABELS.deploy}=${deploy}`] };
      const services = ((await call('service ls', () => docker.listServices({ filters }))) ?? []) as unknown as ServiceDoc[];
      for (const s of services) {
        if (s.Spec.Name === spec.name) continue;
        const t = currentTask(await tasksOf(s.ID));
        if (t?.NodeID && t.DesiredState === 'running') siblings.push(t.NodeID);
      }
    }
    const view = nodes.map((n) => ({ id: n.ID, schedulable: n.Status?.State === 'ready' && (n.Spec?.Availability ?? 'active') === 'active' }));
    return placementConstraints({ nodes: view, siblingNodes: siblings });
  };

  /**
   * Replicas of one app and deploy started together (the deploy starts them at once) must not pick their
   * node from the same view: each waits for the one before it to be placed (its task assigned a node) before
   * it reads where its siblings run. The starts themselves still overlap.
   */
  const placing = new Map<string, Promise<void>>();
  const placedInTurn = async <T>(spec: ContainerSpec, place: () => Promise<T>, placed: (made: T) => Promise<void>): Promise<T> => {
    const app = spec.labels[LABELS.app];
    const deploy = spec.labels[LABELS.deploy];
    if (!app || !deploy) return place();
    const key = `${app}/${deploy}`;
    const before = placing.get(key);
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    placing.set(key, mine);
    try {
      await before;
      const made = await place();
      await placed(made);
      return made;
    } finally {
      done();
      if (placing.get(key) === mine) placing.delete(key);
    }
  };

  /** Waits (bounded) until the service's newest task has a node: from then on it counts as a sibling. */
  const assigned = async (serviceId: string): Promise<void> => {
    const end = Date.now() + PLACE_WAIT_MS;
    while (!currentTask(await tasksOf(serviceId))?.NodeID && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  };

  /** Waits until the service's newest task runs or has ended; returns what it is then. */
  const settle = async (svc: ServiceDoc, network: string | undefined, replacing?: string): Promise<ContainerInfo> => {
    const end = Date.now() + TASK_WAIT_MS;
    for (;;) {
      const nodes = await nodeDocs();
      const task = currentTask(await tasksOf(svc.ID));
      const info = await describe(svc, task, network, nodes);
      const fresh = task !== undefined && task.ID !== replacing;
      if (fresh && (info.running || info.state === 'exited')) return info;
      if (Date.now() > end) return info;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const owned = async (nameOrId: string, adopted = false) => {
    const svc = await serviceDoc(nameOrId);
    if (!svc) return undefined;
    const err = adopted ? undefined : notOurs(nameOrId, svc.Spec.Labels ?? {}, opts.instance);
    if (err) throw err;
    return svc;
  };

  /** A service update: the spec as it is with `change` applied, at the version read (optimistic). */
  const update = async (svc: NonNullable<Awaited<ReturnType<typeof serviceDoc>>>, change: (spec: Record<string, any>) => void) => {
    const spec = structuredClone(svc.Spec) as Record<string, any>;
    change(spec);
    await call(`service update ${svc.Spec.Name}`, () => docker.getService(svc.ID).update({ ...spec, version: svc.Version.Index } as never));
  };

  /**
   * Where an exec into a service's task goes: its container and the exec code of the engine that runs it
   * (this one, or another node's through its agent, the same code: docker-exec.ts).
   */
  const execTarget = async (nameOrId: string): Promise<{ id: string; ops: ExecOps; node?: string }> => {
    const svc = await serviceDoc(nameOrId);
    if (!svc) return { id: nameOrId, ops: local };
    const task = currentTask(await tasksOf(svc.ID));
    const id = task?.Status?.ContainerStatus?.ContainerID;
    if (!task || !id) throw new Error(`${svc.Spec.Name} has no running task`);
    if (task.NodeID === (await selfNodeId())) return { id, ops: local };
    if (task.Status?.State !== 'running') throw new Error(`${svc.Spec.Name} has no running task (${task.Status?.State ?? 'unknown'})`);
    if (!opts.agents) throw new Error(`${svc.Spec.Name} runs on node ${task.NodeID}; only tasks on the manager svc runs on can be reached for exec`);
    return { id, ops: createExecOps(await opts.agents.client(task.NodeID!)), node: task.NodeID };
  };
  const hostnameOf = async (nodeId: string) =>
    (((await call(`node inspect ${nodeId}`, () => docker.getNode(nodeId).inspect(), [404]).catch(() => undefined)) as NodeDoc | undefined)?.Description?.Hostname ?? nodeId);

  /** The node a service is pinned to (its data's), when that is not the manager svc runs on. */
  const dataNodeOfService = async (svc: { Spec: Record<string, any> }): Promise<DataNode | undefined> => {
    const id = constrainedNode(svc.Spec.TaskTemplate?.Placement?.Constraints);
    if (!id || id === (await selfNodeId())) return undefined;
    return { id, hostname: await hostnameOf(id) };
  };

  /** An exec elsewhere fails in words about the agent, not the relay's HTTP status. */
  const remoteOr = <T>(node: string | undefined, run: () => Promise<T>) => (node ? run().catch((err: unknown) => Promise.reject(agentFailure(node, err))) : run());

  const runtime: SwarmRuntime = {
    ...local,
    docker,
    selfNodeId,

    async dataNodeOf(nameOrId) {
      const svc = await serviceDoc(nameOrId);
      return svc ? dataNodeOfService(svc) : undefined; // a plain container: the manager's
    },

    async newServiceDataNode() {
      const self = await selfNodeId();
      const nodes = await nodeDocs();
      const id = pinnedNode({ role: 'service', hasMounts: true, managerId: self, nodes: nodes.map((n) => ({ id: n.ID, labels: n.Spec?.Labels ?? {} })) });
      return id && id !== self ? { id, hostname: nodes.find((n) => n.ID === id)?.Description?.Hostname ?? id } : undefined;
    },

    async readDir(nameOrId, path) {
      const svc = await serviceDoc(nameOrId);
      if (!svc) return local.readDir(nameOrId, path);
      const tasks = await tasksOf(svc.ID);
      // Pinned: where its data is; else wherever its task runs (a bind mount there names that node's disk).
      const node = constrainedNode((svc.Spec as any).TaskTemplate?.Placement?.Constraints) ?? currentTask(tasks)?.NodeID;
      const task = node ? dataTask(tasks, node) : undefined;
      const id = task?.Status?.ContainerStatus?.ContainerID;
      if (!node || !id) {
        throw new Error(`the data of ${svc.Spec.Name} is on node ${node ? await hostnameOf(node) : '(none yet)'} and no container of it is left there to read it through; start it and try again`);
      }
      if (node === (await selfNodeId())) return local.readDir(id, path);
      if (!opts.agents) throw new Error(`the data of ${svc.Spec.Name} is on node ${await hostnameOf(node)}; only the manager's disk can be read without the node agents`);
      const client = await opts.agents.client(node).catch((err: unknown) => Promise.reject(agentFailure(node, err)));
      return readContainerDir(client, id, path).catch((err: unknown) => Promise.reject(agentFailure(node, err)));
    },

    async openNodeDisk(node, dataDir, tag) {
      if (!opts.agents || !opts.diskImage) throw new Error(`node ${node.hostname}'s disk cannot be reached without the node agents`);
      const agents = opts.agents;
      return openNodeDisk({ docker, instance: opts.instance, image: opts.diskImage, registryAuth: opts.registryAuth, client: (id) => agents.client(id), log: opts.log }, node, dataDir, tag);
    },

    // Stacks run on one engine only (src/desired/stacks.ts refuses them on a Swarm): none of their networks here.
    async listNetworks() {
      return [];
    },

    async deleteNetwork() {},

    async ensureNetwork(name) {
      const existing = ((await call(`network ls ${name}`, () => docker.listNetworks({ filters: { name: [name] } }))) ?? []).filter((n) => n.Name === name);
      if (existing.length > 0) {
        if (existing[0]!.Driver !== 'overlay') throw new Error(`network ${name} exists with driver ${existing[0]!.Driver}; SVC_RUNTIME=swarm needs an overlay network of that name: remove it or set SVC_NETWORK`);
        return;
      }
      try {
        await docker.createNetwork({ Name: name, Driver: 'overlay', Attachable: true, CheckDuplicate: true, Labels: { [LABELS.managed]: 'true', [LABELS.instance]: opts.instance } });
        opts.log.info('created overlay network', { network: name });
      } catch (err) {
        if (statusOf(err) === 409) return;
        throw engineError(`network create ${name}`, err);
      }
    },

    async list(labels, network) {
      const label = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
      const services = ((await call('service ls', () => docker.listServices({ filters: { label } }))) ?? []) as unknown as ServiceDoc[];
      const nodes = await nodeDocs();
      const fromServices = await Promise.all(services.map((s) => infoOf(s, network, nodes)));
      const containers = (await local.list(labels, network)).filter((c) => !c.labels[SWARM_SERVICE_LABEL]);
      return [...fromServices, ...containers];
    },

    async inspect(nameOrId, network) {
      const svc = await serviceDoc(nameOrId);
      return svc ? infoOf(svc, network) : local.inspect(nameOrId, network);
    },

    async run(spec) {
      if (spec.extraNetworks?.length) throw new Error('stacks run on one Docker engine only (SVC_RUNTIME=docker): a Swarm task joins no stack network');
      if (!SERVICE_ROLES.has(spec.labels[LABELS.role] ?? '')) return local.run(spec);
      ref(spec.name);
      checkImageRef(spec.image);
      if (await serviceDoc(spec.name)) throw new NameInUseError(`docker service create ${spec.name}: a service of that name exists`);
      const image = clusterImage(spec.image, await registryFor(spec.image));
      // A private image: the credentials go with the create (X-Registry-Auth), Swarm hands them to the node
      // that runs each task, so a worker pulls it too. Never part of the spec (inspect would show it).
      const auth = opts.registryAuth?.(image);
      const created = await placedInTurn(
        spec,
        async () => {
          const constraints = await constraintsFor(spec, await nodeDocs());
          return (await call(`service create ${spec.name}`, () =>
            auth
              ? (docker.createService(auth as never, toServiceSpec({ ...spec, image }, { constraints }) as never) as unknown as Promise<Docker.Service>)
              : docker.createService(toServiceSpec({ ...spec, image }, { constraints }) as never),
          ))!;
        },
        (made) => assigned(made.id),
      );
      const svc = (await serviceDoc(created.id))!;
      return settle(svc, spec.network);
    },

    async start(nameOrId) {
      const svc = await serviceDoc(nameOrId);
      if (!svc) return local.start(nameOrId);
      const before = currentTask(await tasksOf(svc.ID));
      const labels = svc.Spec.Labels ?? {};
      const spec = { name: svc.Spec.Name, labels, mounts: (svc.Spec as any).TaskTemplate?.ContainerSpec?.Mounts } as ContainerSpec;
      const constraints = await constraintsFor(spec, await nodeDocs(), (svc.Spec as any).TaskTemplate?.Placement?.Constraints);
      // A new task for the one slot: Swarm never restarts it by itself (restart policy none).
      await update(svc, (s) => {
        s.Mode = { Replicated: { Replicas: 1 } };
        s.TaskTemplate.ForceUpdate = (s.TaskTemplate.ForceUpdate ?? 0) + 1;
        s.TaskTemplate.Placement = { ...(s.TaskTemplate.Placement ?? {}), Constraints: constraints.length ? constraints : undefined };
      });
      const networks = (svc.Spec as any).TaskTemplate?.Networks as { Target: string }[] | undefined;
      const net = networks?.[0]?.Target;
      const netName = net ? (((await call('network inspect', () => docker.getNetwork(net).inspect(), [404])) as { Name?: string } | undefined)?.Name ?? net) : undefined;
      await settle(svc, netName, before?.ID);
    },

    async stop(nameOrId, graceSeconds, o) {
      const svc = await owned(nameOrId, o?.adopted);
      if (!svc) return local.stop(nameOrId, graceSeconds, o);
      if ((svc.Spec.Mode?.Replicated?.Replicas ?? 1) > 0) {
        await update(svc, (s) => {
          s.Mode = { Replicated: { Replicas: 0 } };
          s.TaskTemplate.ContainerSpec.StopGracePeriod = graceSeconds * 1e9;
        });
      }
      const end = Date.now() + (graceSeconds + 10) * 1000;
      while (Date.now() < end) {
        const t = currentTask(await tasksOf(svc.ID));
        if (!t || (t.Status?.State !== 'running' && t.Status?.State !== 'starting')) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    },

    async remove(nameOrId) {
      const svc = await owned(nameOrId);
      if (!svc) return local.remove(nameOrId);
      await call(`service rm ${svc.Spec.Name}`, () => docker.getService(svc.ID).remove(), [404]);
    },

    async exec(nameOrId, cmd, o) {
      const t = await execTarget(nameOrId);
      return remoteOr(t.node, () => t.ops.exec(t.id, cmd, o));
    },

    async execToFile(nameOrId, cmd, path, o) {
      const t = await execTarget(nameOrId);
      return remoteOr(t.node, () => t.ops.execToFile(t.id, cmd, path, o));
    },

    async *logs(nameOrId, o) {
      const svc = await serviceDoc(nameOrId);
      if (!svc) return yield* local.logs(nameOrId, o);
      // The service's logs: Swarm fetches them from the node its task runs on (and ran on: earlier tasks of
      // this replica too, as a container's log keeps its earlier runs), so a replica on a worker has its logs.
      const op = `service logs ${svc.Spec.Name}`;
      let stream: Readable;
      try {
        const got: unknown = await docker.getService(svc.ID).logs({ stdout: true, stderr: true, timestamps: true, tail: o.tail ?? 'all', follow: o.follow, abortSignal: o.signal } as never);
        stream = Buffer.isBuffer(got) ? Readable.from([got]) : (got as Readable);
      } catch (err) {
        if (o.signal?.aborted) return;
        throw engineError(op, err);
      }
      yield* demuxLines(docker.modem, stream, o.signal);
    },

    events(signal, o) {
      return mergeEvents(local.events(signal, o), watchSwarm({ docker, instance: opts.instance, intervalMs: opts.watchIntervalMs ?? 1_000, signal, log: opts.log }));
    },

    clusterImage: async (tag) => clusterImage(tag, await registryFor(tag)),

    async build(contextDir, tag, onLog, signal) {
      await local.build(contextDir, tag, onLog, signal);
      const target = clusterImage(tag, await registryFor(tag));
      if (target === tag) return;
      // Pushed under the registry's name, so a task on any node pulls what the manager built.
      const [repo, version] = splitTag(target);
      await call(`tag ${tag}`, () => docker.getImage(checkImageRef(tag)).tag({ repo, tag: version }));
      const stream = (await call(`push ${target}`, () => docker.getImage(target).push({ authconfig: opts.registryAuth?.(target) ?? {} } as never) as unknown as Promise<Readable>))!;
      try {
        await followProgress(stream, (m) => {
          if (m.status && /Pushed|digest/.test(m.status)) onLog?.(`push: ${m.status}`);
        });
      } catch (err) {
        throw engineError(`push ${target}`, err);
      }
      onLog?.(`pushed ${target}`);
    },

    async pastActions(containerId, sinceMs) {
      // A service's task may have run on another node, whose events this engine never sees: none known.
      return (await serviceDoc(containerId)) ? [] : local.pastActions(containerId, sinceMs);
    },

    async nodes() {
      return (await nodeDocs()).map(toNodeView);
    },

    async placements() {
      const filters = { label: [`${LABELS.managed}=true`, `${LABELS.instance}=${opts.instance}`] };
      const services = ((await call('service ls', () => docker.listServices({ filters }))) ?? []) as unknown as ServiceDoc[];
      const out = new Map<string, { name: string; labels: Record<string, string> }[]>();
      const down = downNodes(await nodeDocs());
      for (const s of services) {
        // Apps' and services' replicas only: the node agents are the instance's infrastructure.
        if (!SERVICE_ROLES.has(s.Spec.Labels?.[LABELS.role] ?? '')) continue;
        const t = currentTask(await tasksOf(s.ID));
        // A task on a node that is down runs nowhere svc can reach: not listed (svc heals it elsewhere).
        if (!t?.NodeID || t.DesiredState !== 'running' || down.has(t.NodeID)) continue;
        const list = out.get(t.NodeID) ?? [];
        list.push({ name: s.Spec.Name, labels: s.Spec.Labels ?? {} });
        out.set(t.NodeID, list);
      }
      return out;
    },

    async updateNode(id, change) {
      const node = (await call(`node inspect ${id}`, () => docker.getNode(ref(id)).inspect(), [404])) as (NodeDoc & { Version: { Index: number } }) | undefined;
      if (!node) throw new NoSuchNodeError(id);
      const spec = { ...(node.Spec ?? {}) } as Record<string, unknown>;
      if (change.availability) spec.Availability = change.availability;
      if (change.labels) spec.Labels = change.labels;
      await call(`node update ${id}`, () => docker.getNode(node.ID).update({ ...spec, version: node.Version.Index } as never) as unknown as Promise<unknown>);
      const after = (await call(`node inspect ${id}`, () => docker.getNode(node.ID).inspect())) as NodeDoc;
      return toNodeView(after);
    },

    async joinInfo(role) {
      const swarm = (await call('swarm inspect', () => docker.swarmInspect())) as { JoinTokens?: { Worker?: string; Manager?: string } };
      const self = (await call('node inspect self', async () => docker.getNode(await selfNodeId()).inspect())) as NodeDoc;
      const token = role === 'manager' ? swarm.JoinTokens?.Manager : swarm.JoinTokens?.Worker;
      if (!token) throw new Error('the engine did not return a join token (is this node a manager?)');
      const address = self.ManagerStatus?.Addr ?? `${self.Status?.Addr}:2377`;
      return { token, address };
    },
  };
  return runtime;
}

/** Pure: where the nodes find an image svc built (`svc-build/...`): in the registry, when there is one. */
export function clusterImage(ref: string, registry: string | undefined): string {
  return registry && ref.startsWith('svc-build/') ? `${registry.replace(/\/+$/, '')}/${ref}` : ref;
}

/** Pure: `repo:tag` into its two parts (the tag after the last colon that follows the last slash). */
export function splitTag(ref: string): [string, string] {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  return colon > slash ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, 'latest'];
}

/** Both event sources into one stream, ended when either ends (the watcher reconnects both). */
async function* mergeEvents(a: AsyncIterable<RuntimeEvent>, b: AsyncIterable<RuntimeEvent>): AsyncGenerator<RuntimeEvent> {
  const its = [a[Symbol.asyncIterator](), b[Symbol.asyncIterator]()];
  const next = its.map((it, i) => it.next().then((r) => ({ r, i })));
  try {
    for (;;) {
      const { r, i } = await Promise.race(next);
      if (r.done) return;
      yield r.value;
      next[i] = its[i]!.next().then((r2) => ({ r: r2, i }));
    }
  } finally {
    // Not awaited: a generator waiting on the engine ends by itself when the signal aborts.
    for (const it of its) void it.return?.(undefined)?.catch(() => {});
  }
}
