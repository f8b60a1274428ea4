// Pure: a ContainerSpec of the Runtime port as a Swarm service spec (SVC_RUNTIME=swarm), and where its task
// may run. One service per replica, not one per deploy: svc heals each replica on its own (issue 19 section
// 1: backoff, flip-back, OOM events are svc's decisions), and Swarm cannot restart or stop one slot of a
// multi-replica service. The replicas of one deploy are kept on different nodes by placement constraints
// computed here from where their siblings run (at most one per node while there are enough nodes).
import type { ContainerSpec } from './runtime.js';
import { limits } from './docker-map.js';

/** The subset of a Swarm ServiceSpec svc writes (Engine API 1.41). */
export interface ServiceSpec {
  Name: string;
  Labels: Record<string, string>;
  TaskTemplate: {
    ContainerSpec: {
      Image: string;
      Env?: string[];
      Labels: Record<string, string>;
      Command?: string[];
      Args?: string[];
      User?: string;
      Dir?: string;
      Init?: boolean;
      StopGracePeriod?: number;
      Mounts?: { Type: 'bind'; Source: string; Target: string; ReadOnly?: boolean }[];
    };
    Resources?: { Limits?: { MemoryBytes?: number; NanoCPUs?: number } };
    RestartPolicy: { Condition: 'none' };
    Placement: { Constraints?: string[] };
    Networks?: { Target: string; Aliases?: string[] }[];
    ForceUpdate?: number;
  };
  Mode: { Replicated: { Replicas: number } };
  EndpointSpec: { Mode: 'dnsrr' };
}

/** A node as placement sees it. */
export interface PlacementNode {
  id: string;
  /** Ready and availability active: Swarm may start a task there. */
  schedulable: boolean;
}

/** Node label naming the node managed services run on (`svc.services=true` on exactly one node). */
export const SERVICES_NODE_LABEL = 'svc.services';

export interface PinInput {
  /** The container's `svc.role`. */
  role: string | undefined;
  /** It bind-mounts directories of the data directory (an app's volumes, a service's data). */
  hasMounts: boolean;
  /** The manager svc runs on: its disk holds the data directory. */
  managerId: string;
  nodes: { id: string; labels: Record<string, string> }[];
  /** The service's constraints now, when it exists (a heal): where its data already is. */
  current?: string[];
}

/**
 * Pure: the node a container must run on, or undefined when it may go anywhere (spread). Data decides:
 * - a container already pinned stays on its node, whatever the labels say now (its data is there; a moved
 *   service would start on an empty directory);
 * - a managed service goes to the one node labelled `svc.services=true`, else (none, or more than one:
 *   ambiguous) to the manager;
 * - anything else with a bind mount (an app's volumes) goes to the manager: the daemon makes, backs up and
 *   restores those directories on its own disk.
 */
export function pinnedNode(i: PinInput): string | undefined {
  if (i.role !== 'service' && !i.hasMounts) return undefined;
  const kept = constrainedNode(i.current);
  if (kept) return kept;
  if (i.role === 'service') {
    const labelled = i.nodes.filter((n) => n.labels[SERVICES_NODE_LABEL] === 'true');
    if (labelled.length === 1) return labelled[0]!.id;
  }
  return i.managerId;
}

/** Pure: the node a service's constraints pin it to (`node.id==X`), if any. */
export function constrainedNode(constraints: string[] | undefined): string | undefined {
  return (constraints ?? []).map((c) => /^node\.id\s*==\s*(\S+)$/.exec(c)?.[1]).find((id) => id !== undefined);
}

/**
 * Pure: the task whose container holds a service's data on its pinned node, to read it through: the running
 * one, else the newest that still has a container there (a stopped service's last task keeps its container).
 */
export function dataTask<T extends { NodeID?: string; CreatedAt?: string; Status?: { State?: string; ContainerStatus?: { ContainerID?: string } } }>(tasks: T[], node: string): T | undefined {
  const there = tasks.filter((t) => t.NodeID === node && t.Status?.ContainerStatus?.ContainerID);
  const created = (t: T) => Date.parse(t.CreatedAt ?? '') || 0;
  return there.sort((a, b) => Number(b.Status?.State === 'running') - Number(a.Status?.State === 'running') || created(b) - created(a))[0];
}

/**
 * Constraints for one replica: `node.id!=` every node where a sibling replica (same app, same deploy) runs,
 * as long as some schedulable node is left; when every schedulable node already has one, no spread
 * constraint (more replicas than nodes share them). `pinnedNode` (a managed service's data lives on one
 * node's disk, and bind mounts name the manager's paths) wins over spreading.
 */
export function placementConstraints(input: { nodes: PlacementNode[]; siblingNodes: string[]; pinnedNode?: string }): string[] {
  if (input.pinnedNode) return [`node.id==${input.pinnedNode}`];
  const taken = new Set(input.siblingNodes);
  const free = input.nodes.filter((n) => n.schedulable && !taken.has(n.id));
  if (free.length === 0) return [];
  return [...taken].sort().map((id) => `node.id!=${id}`);
}

/**
 * The service for `spec`: one replica, restart policy none (svc heals), limits as Swarm resources, the
 * overlay network with the spec's aliases, no virtual IP (endpoint mode dnsrr: the VIP needs IPVS, absent
 * on some kernels, and it would hide which replica failed; svc routes to task addresses itself).
 */
export function toServiceSpec(spec: ContainerSpec, o: { constraints: string[]; stopGraceSeconds?: number; replicas?: number; forceUpdate?: number }): ServiceSpec {
  if (spec.hostNetwork) throw new Error(`${spec.name}: a Swarm service cannot use the host network`);
  const l = limits(spec.resources);
  const resources = l.Memory !== undefined || l.NanoCpus !== undefined ? { Limits: { MemoryBytes: l.Memory, NanoCPUs: l.NanoCpus } } : undefined;
  return {
    Name: spec.name,
    Labels: spec.labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: spec.image,
        Env: spec.env ? Object.entries(spec.env).map(([k, v]) => `${k}=${v}`) : undefined,
        Labels: spec.labels,
        Command: spec.entrypoint,
        Args: spec.cmd,
        User: spec.user,
        Dir: spec.workingDir,
        Init: spec.init || undefined,
        StopGracePeriod: o.stopGraceSeconds !== undefined ? o.stopGraceSeconds * 1e9 : undefined,
        Mounts: spec.mounts?.map((m) => ({ Type: 'bind' as const, Source: m.source, Target: m.target, ReadOnly: m.readOnly || undefined })),
      },
      Resources: resources,
      RestartPolicy: { Condition: 'none' },
      Placement: { Constraints: o.constraints.length ? o.constraints : undefined },
      Networks: spec.network ? [{ Target: spec.network, Aliases: spec.networkAliases?.length ? spec.networkAliases : undefined }] : undefined,
      ForceUpdate: o.forceUpdate,
    },
    Mode: { Replicated: { Replicas: o.replicas ?? 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}
