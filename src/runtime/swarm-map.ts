// Pure: what the Swarm API says about a service, its tasks and the nodes, in the Runtime port's shapes. A
// service stands for one container of the port (swarm-spec.ts); its newest task is that container's run.
import type { ContainerInfo, ContainerState, NodeView } from './runtime.js';

/** The subset of GET /tasks svc reads. */
export interface TaskDoc {
  ID: string;
  ServiceID: string;
  NodeID?: string;
  Slot?: number;
  CreatedAt?: string;
  UpdatedAt?: string;
  Version?: { Index?: number };
  DesiredState?: string;
  Status?: { State?: string; Timestamp?: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  NetworksAttachments?: { Network?: { Spec?: { Name?: string } }; Addresses?: string[] }[];
}

export interface ServiceDoc {
  ID: string;
  Spec: {
    Name: string;
    Labels?: Record<string, string>;
    TaskTemplate?: { ContainerSpec?: { Image?: string }; Resources?: { Limits?: { MemoryBytes?: number } } };
    Mode?: { Replicated?: { Replicas?: number } };
  };
}

/**
 * Pure: what svc can say about an exit 137 (SIGKILL) of a task. Swarm's task status has no OOMKilled flag.
 * svc asks the engine that ran it (`engineSays`: the container's State.OOMKilled; the manager's own, or
 * another node's through its agent) and reports exactly that. When that engine cannot be asked (the node's
 * agent not running) it can only suspect: a task that failed by itself (task state `failed`; one svc
 * stopped ends `shutdown`, even when its grace ran out and it was SIGKILLed) under a memory limit was most
 * likely killed for memory. (The desired state says nothing here: Swarm sets a failed task's to `shutdown`.)
 */
export function oomVerdict(i: { exitCode?: number; taskState?: string; memoryLimitBytes?: number; engineSays?: boolean }): { oomKilled?: true; oomLikely?: true } {
  if (i.exitCode !== 137) return {};
  if (i.engineSays !== undefined) return i.engineSays ? { oomKilled: true } : {};
  return i.taskState === 'failed' && (i.memoryLimitBytes ?? 0) > 0 ? { oomLikely: true } : {};
}

/** The subset of GET /nodes svc reads. */
export interface NodeDoc {
  ID: string;
  Description?: { Hostname?: string; Engine?: { EngineVersion?: string }; Resources?: { NanoCPUs?: number; MemoryBytes?: number } };
  Spec?: { Role?: string; Availability?: string; Labels?: Record<string, string> };
  Status?: { State?: string; Addr?: string };
  ManagerStatus?: { Leader?: boolean; Addr?: string; Reachability?: string };
}

export function toNodeView(n: NodeDoc): NodeView {
  const availability = n.Spec?.Availability === 'drain' || n.Spec?.Availability === 'pause' ? n.Spec.Availability : 'active';
  return {
    id: n.ID,
    hostname: n.Description?.Hostname ?? '',
    // A manager's own Status.Addr can be 0.0.0.0; its advertised address is in ManagerStatus.
    address: (n.ManagerStatus?.Addr?.replace(/:\d+$/, '') || n.Status?.Addr) ?? '',
    role: n.Spec?.Role === 'manager' ? 'manager' : 'worker',
    leader: n.ManagerStatus?.Leader === true,
    availability,
    state: n.Status?.State ?? 'unknown',
    labels: n.Spec?.Labels ?? {},
    engineVersion: n.Description?.Engine?.EngineVersion ?? '',
    cpus: (n.Description?.Resources?.NanoCPUs ?? 0) / 1e9,
    memoryMb: Math.round((n.Description?.Resources?.MemoryBytes ?? 0) / (1024 * 1024)),
  };
}

/**
 * The task that stands for the service's container now: the newest one by creation, if any. Not the
 * highest version: an old task's status updates (its shutdown after a drain) raise its version above the
 * task that replaced it.
 */
export function currentTask(tasks: TaskDoc[]): TaskDoc | undefined {
  const created = (t: TaskDoc) => Date.parse(t.CreatedAt ?? '') || 0;
  return [...tasks].sort((a, b) => created(b) - created(a) || (b.Version?.Index ?? 0) - (a.Version?.Index ?? 0))[0];
}

const STARTING = new Set(['new', 'allocated', 'pending', 'assigned', 'accepted', 'preparing', 'ready', 'starting']);

/**
 * The container the port reports for a service. A task on a node that is down is not running, whatever its
 * last report said (a lost node cannot report its tasks' end), so svc heals it elsewhere.
 */
export function toContainerInfoFromTask(svc: ServiceDoc, task: TaskDoc | undefined, o: { network?: string; downNodes: Set<string> }): ContainerInfo {
  const base = {
    id: svc.ID,
    name: svc.Spec.Name,
    image: (svc.Spec.TaskTemplate?.ContainerSpec?.Image ?? '').replace(/@sha256:[0-9a-f]+$/, ''),
    labels: svc.Spec.Labels ?? {},
    health: 'none' as const,
  };
  if (!task) return { ...base, state: 'exited', running: false };
  const s = task.Status?.State ?? 'new';
  const nodeDown = task.NodeID !== undefined && o.downNodes.has(task.NodeID);
  const running = s === 'running' && task.DesiredState === 'running' && !nodeDown;
  let state: ContainerState;
  if (running) state = 'running';
  else if (s === 'remove') state = 'removing';
  // Swarm's updater makes a new task with desired state `ready` and raises it to `running` once the old
  // one is stopped: it is starting, not ended (read as ended, a start returned before its task ran).
  else if (STARTING.has(s) && (task.DesiredState === 'running' || task.DesiredState === 'ready') && !nodeDown) state = 'created';
  else state = 'exited';
  const exited = state === 'exited';
  const outside = exited && stoppedBySwarm(task, nodeDown);
  return {
    ...base,
    state,
    running,
    exitCode: exited ? task.Status?.ContainerStatus?.ExitCode : undefined,
    address: running ? addressOn(task, o.network) : undefined,
    startedAt: running ? task.Status?.Timestamp : undefined,
    finishedAt: exited ? task.Status?.Timestamp : undefined,
    error: nodeDown ? `node ${task.NodeID} is down` : task.Status?.Err || undefined,
    ...(outside ? { stoppedFromOutside: true } : {}),
  };
}

/** Task states in which a task's container ended by itself: exit 0, a non-zero exit (or a kill for memory), a refused start. */
const OWN_ENDS = new Set(['complete', 'failed', 'rejected']);

/**
 * Pure: whether a task that is not running was stopped by Swarm rather than ended by its container. Swarm
 * marks a task it stops (a drain of its node, a rebalance, a scale or update) with desired state `shutdown`
 * or `remove` and, once the container exits on its SIGTERM (often with code 0), state `shutdown`; a
 * container that exits on its own ends `complete` or `failed` (Swarm then sets the desired state to
 * `shutdown` too, so the desired state alone does not tell). A task on a node that is down did not end at
 * all as far as anyone knows. Neither says anything about the version it runs.
 */
export function stoppedBySwarm(task: Pick<TaskDoc, 'DesiredState' | 'Status'>, nodeDown: boolean): boolean {
  if (nodeDown) return true;
  const desired = task.DesiredState ?? 'running';
  if (desired !== 'shutdown' && desired !== 'remove') return false;
  return !OWN_ENDS.has(task.Status?.State ?? '');
}

/** The task's address on `network` (or the first one), without the prefix length. */
export function addressOn(task: TaskDoc, network?: string): string | undefined {
  const atts = task.NetworksAttachments ?? [];
  const att = network ? atts.find((a) => a.Network?.Spec?.Name === network) : atts.find((a) => a.Network?.Spec?.Name !== 'ingress');
  return att?.Addresses?.[0]?.replace(/\/\d+$/, '') || undefined;
}
