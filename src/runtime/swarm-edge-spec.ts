// Pure: edge nodes of a Swarm (docs/decisions/0043-edge-nodes.md, 0047-swarm-edge-resolves.md). A node labelled
// `svc.edge=true` serves every app's routes from its own address, as the manager does, with three services pinned
// to it: a Caddy on the node's host network, a relay on the overlay and the relay's resolver (dnsmasq), sharing the
// volumes `<instance>-edge` (the sockets) and `<instance>-edge-dns` (the hosts files), both written through the
// node's agent. Here: the label, the paths in the volumes, the boot configs, the specs. Same input, same output.
import { createHash } from 'node:crypto';
import { resolverArgs } from './resolver-spec.js';

/** Node label: `true` makes the node an edge (besides the manager, always one). */
export const EDGE_NODE_LABEL = 'svc.edge';
/** The admin APIs' allowed Host (a unix socket has no address of its own to check); the manager's relay uses it too. */
export const EDGE_ADMIN_HOST = 'svc-edge';
/** Where the volume is mounted in the edge node's Caddy, its relay and its agent. */
export const EDGE_NODE_DIR = '/svc-edge';
/** Where the hosts files' volume is mounted in the agent (written) and in the resolver (read: its hosts directory). */
export const EDGE_DNS_DIR = '/svc-edge-dns';
/** The sockets in the volume: what the node's Caddy dials (the relay's listener) and the admin APIs. */
export const EDGE_NODE_SOCKETS = {
  relay: `${EDGE_NODE_DIR}/relay-a.sock`,
  relayAdmin: `${EDGE_NODE_DIR}/relay-admin-a.sock`,
  proxyAdmin: `${EDGE_NODE_DIR}/proxy-admin.sock`,
} as const;
/** The agent's path prefixes to those admin APIs (the daemon's calls: `<prefix>/load`, `<prefix>/config/`). */
export const EDGE_ADMIN_PREFIX = { proxy: '/svc-edge/proxy', relay: '/svc-edge/relay' } as const;
export type EdgePart = keyof typeof EDGE_ADMIN_PREFIX;
export const EDGE_PARTS: readonly EdgePart[] = ['proxy', 'relay'];
/** The services of an edge node: the two Caddy parts and the resolver. */
export type EdgeService = EdgePart | 'dns';
export const EDGE_SERVICES: readonly EdgeService[] = [...EDGE_PARTS, 'dns'];
/** Roles of the services (the Nodes page and the app reconcilers ignore them: infrastructure). */
export const EDGE_ROLES = { proxy: 'edge-proxy', relay: 'edge-relay', dns: 'edge-dns' } as const;
/** A part's admin socket in the volume (what the agent's route to it dials). */
export const edgeAdminSocket = (part: EdgePart) => (part === 'proxy' ? EDGE_NODE_SOCKETS.proxyAdmin : EDGE_NODE_SOCKETS.relayAdmin);
/** Label: the node an edge service serves; and a hash of its spec (another hash means a service update). */
export const EDGE_NODE_OF = 'svc.node';
export const EDGE_SPEC_LABEL = 'svc.edge-spec';
/** The bootstrap's file name inside the task (/run/secrets/<this>). */
const BOOT_FILE = 'edge-boot.json';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The instance's volume on an edge node (local driver: Swarm creates it on that node at the first task). */
export const edgeVolumeName = (instance: string) => `${instance}-edge`;
export const edgeDnsVolumeName = (instance: string) => `${instance}-edge-dns`;
export const edgeServiceName = (instance: string, part: EdgeService, nodeId: string) => `${instance}-edge-${part}-${nodeId.slice(0, 12)}`;

/**
 * Pure: whether the node's labels make it an edge. Only `true` and `false` (or no label) mean something;
 * anything else throws (the plan skips the node and says why), so a typo never half-configures a node.
 */
export function isEdgeNode(labels: Record<string, string> | undefined): boolean {
  const v = labels?.[EDGE_NODE_LABEL];
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw new Error(`node label ${EDGE_NODE_LABEL}="${v.slice(0, 40)}" is neither "true" nor "false"`);
}

/** Pure: an edge Caddy's admin API on a unix socket, Host svc-edge only (every relay's and edge Caddy's). */
export const edgeAdminConfig = (socket: string) => ({ listen: `unix/${socket}`, origins: [EDGE_ADMIN_HOST] });

/** Pure: the config a part starts with (its admin API, nothing else) before svc loads it. */
export const edgeBootConfig = (part: EdgePart): Json => ({ admin: edgeAdminConfig(edgeAdminSocket(part)) });

/** Pure: the labels of an edge container or service of `role`, with the hash of `hashed` (its spec, as svc means it). */
export function edgeLabels(instance: string, role: string, hashed: unknown, extra: Record<string, string> = {}): Record<string, string> {
  const hash = createHash('sha256').update(JSON.stringify(hashed)).digest('hex').slice(0, 16);
  return { 'svc.managed': 'true', 'svc.instance': instance, 'svc.role': role, ...extra, [EDGE_SPEC_LABEL]: hash };
}

/**
 * Pure: a part's bootstrap as a Swarm secret (the image has no shell to write a file, and `svc uninstall`
 * already removes the instance's secrets): `<instance>-edge-<part>-<hash>`; nothing secret in it.
 */
export function edgeBootSecret(instance: string, part: EdgePart): { name: string; data: string } {
  const data = JSON.stringify(edgeBootConfig(part));
  return { name: `${instance}-edge-${part}-${createHash('sha256').update(data).digest('hex').slice(0, 12)}`, data };
}

export interface EdgeSpecInput {
  instance: string;
  /** The instance's overlay (the relay's network). */
  network: string;
  image: string;
  nodeId: string;
  part: EdgePart;
  secret: { id: string; name: string };
}

/** One task pinned to the node, restarted by Swarm (infrastructure, like the agents), on `network`; its hash of `hashed` as its container. */
function pinned<C extends object>(i: { instance: string; nodeId: string; part: EdgeService }, network: string, ContainerSpec: C, hashed: object = ContainerSpec) {
  const base = {
    Name: edgeServiceName(i.instance, i.part, i.nodeId),
    TaskTemplate: { ContainerSpec, RestartPolicy: { Condition: 'any', Delay: 2e9 }, Placement: { Constraints: [`node.id==${i.nodeId}`] }, Networks: [{ Target: network }] },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
  const Labels = edgeLabels(i.instance, EDGE_ROLES[i.part], { ...base, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: hashed } }, { [EDGE_NODE_OF]: i.nodeId });
  return { ...base, Labels, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...ContainerSpec, Labels } } };
}

/** Pure: the resolver's Swarm service on one node (dnsmasq, the hosts files' volume read-only). */
export function edgeResolverSpec(i: { instance: string; network: string; nodeId: string; image: string }) {
  return pinned({ ...i, part: 'dns' }, i.network, {
    Image: i.image,
    Args: resolverArgs(EDGE_DNS_DIR),
    // Root binds port 53 and then drops to nobody (the files are world-readable: nothing secret in them).
    User: '0:0',
    Mounts: [{ Type: 'volume' as const, Source: edgeDnsVolumeName(i.instance), Target: EDGE_DNS_DIR, ReadOnly: true }],
  });
}

/** Pure: one Caddy part's Swarm service on one node (the Caddy on the node's own network, the relay on the overlay). */
export function edgeServiceSpec(i: EdgeSpecInput) {
  // Each part its own HOME and XDG dirs (the relay's keep the name they had in decision 0039: its task is kept).
  const home = `${EDGE_NODE_DIR}/${i.part === 'proxy' ? 'proxy' : 'relay-a'}`;
  const secret = (SecretID: string) => ({ SecretID, SecretName: i.secret.name, File: { Name: BOOT_FILE, UID: '0', GID: '0', Mode: 0o400 } });
  const container = (secretId: string) => ({
    Image: i.image,
    Command: ['/usr/bin/caddy'],
    // --resume: a restarted task (or node) serves the last config at once, without the daemon.
    Args: ['run', '--resume', '--config', `/run/secrets/${BOOT_FILE}`],
    // Root: the Caddy binds 80/443 on the node; both use sockets in a volume made by root.
    User: '0:0',
    // The certificates (data) and the autosaved config live in the volume: they survive a new task.
    Env: [`HOME=${home}`, `XDG_DATA_HOME=${home}/data`, `XDG_CONFIG_HOME=${home}/config`],
    Mounts: [{ Type: 'volume' as const, Source: edgeVolumeName(i.instance), Target: EDGE_NODE_DIR }],
    Secrets: [secret(secretId)],
  });
  // The secret's id is Swarm's (its name holds the content's hash): left out of the hash.
  return pinned(i, i.part === 'proxy' ? 'host' : i.network, container(i.secret.id), container(''));
}

/** A node and a service as the edge plan reads them (the SwarmObjects port's rows). */
export type { SwarmNode as EdgePlanNode, SwarmServiceRow as EdgePlanService } from './swarm-objects.js';
