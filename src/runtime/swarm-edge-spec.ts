// Pure: edge nodes of a Swarm (docs/decisions/0043-edge-nodes.md, 0047-swarm-edge-resolves.md). A node labelled
// `svc.edge=true` serves every app's routes from its own address, as the manager does: three Swarm services of
// the instance pinned to it, a Caddy on the node's host network (listeners, TLS), a relay on the overlay (reaches
// the tasks, resolving their names) and its resolver (dnsmasq), sharing named volumes: `<instance>-edge` for the
// relay's socket the Caddy dials and the admin sockets, `<instance>-edge-dns` for the hosts files. The daemon
// loads the configs and writes the files through the node's agent (its config routes two path prefixes to the
// admin sockets, behind the key). Here: the label's meaning, the paths in the volumes, the bootstrap configs,
// the services' specs. Same input, same output.
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
/**
 * The sockets in the volume: what the node's Caddy dials (the relay's listener) and the admin APIs. The relay's
 * are the names relay A of the pair before had (docs/decisions/0039-two-relays-swapped.md), so its task is kept.
 */
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

/** Pure: the config a part starts with (its admin API on its socket, nothing else) before svc loads it. */
export function edgeBootConfig(part: EdgePart): Json {
  return { admin: { listen: `unix/${edgeAdminSocket(part)}`, origins: [EDGE_ADMIN_HOST] } };
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

const withLabels = <T extends { TaskTemplate: { ContainerSpec: object } }>(base: T, hashed: unknown, i: { instance: string; nodeId: string; part: EdgeService }) => {
  const hash = createHash('sha256').update(JSON.stringify(hashed)).digest('hex').slice(0, 16);
  const Labels = { 'svc.managed': 'true', 'svc.instance': i.instance, 'svc.role': EDGE_ROLES[i.part], [EDGE_NODE_OF]: i.nodeId, [EDGE_SPEC_LABEL]: hash };
  return { ...base, Labels, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...base.TaskTemplate.ContainerSpec, Labels } } };
};

/** One task pinned to the node, restarted by Swarm (infrastructure, like the agents), on `network`. */
const pinned = <C extends object>(Name: string, nodeId: string, network: string, ContainerSpec: C) => ({
  Name,
  TaskTemplate: { ContainerSpec, RestartPolicy: { Condition: 'any', Delay: 2e9 }, Placement: { Constraints: [`node.id==${nodeId}`] }, Networks: [{ Target: network }] },
  Mode: { Replicated: { Replicas: 1 } },
  EndpointSpec: { Mode: 'dnsrr' },
});

/** Pure: the resolver's Swarm service on one node (dnsmasq of SVC_RESOLVER_IMAGE, the hosts files' volume read-only). */
export function edgeResolverSpec(i: { instance: string; network: string; nodeId: string; image: string }) {
  const base = pinned(edgeServiceName(i.instance, 'dns', i.nodeId), i.nodeId, i.network, {
    Image: i.image,
    Args: resolverArgs(EDGE_DNS_DIR),
    // Root binds port 53 and then drops to nobody (the files are world-readable: nothing secret in them).
    User: '0:0',
    Mounts: [{ Type: 'volume' as const, Source: edgeDnsVolumeName(i.instance), Target: EDGE_DNS_DIR, ReadOnly: true }],
  });
  return withLabels(base, base, { ...i, part: 'dns' });
}

/** Pure: one Caddy part's Swarm service on one node (its spec's hash in a label). */
export function edgeServiceSpec(i: EdgeSpecInput) {
  // Each part its own HOME and XDG dirs (the relay's is relay A's of the pair before: its task is kept).
  const home = `${EDGE_NODE_DIR}/${i.part === 'proxy' ? 'proxy' : 'relay-a'}`;
  // The Caddy on the node's own network (its listeners are the node's ports); the relay on the overlay.
  const base = pinned(edgeServiceName(i.instance, i.part, i.nodeId), i.nodeId, i.part === 'proxy' ? 'host' : i.network, {
    Image: i.image,
    Command: ['/usr/bin/caddy'],
    // --resume: a restarted task (or node) serves the last config at once, without the daemon.
    Args: ['run', '--resume', '--config', `/run/secrets/${BOOT_FILE}`],
    // Root: the Caddy binds 80/443 on the node; both use sockets in a volume made by root.
    User: '0:0',
    // The certificates (data) and the autosaved config live in the volume: they survive a new task.
    Env: [`HOME=${home}`, `XDG_DATA_HOME=${home}/data`, `XDG_CONFIG_HOME=${home}/config`],
    Mounts: [{ Type: 'volume' as const, Source: edgeVolumeName(i.instance), Target: EDGE_NODE_DIR }],
    Secrets: [{ SecretID: i.secret.id, SecretName: i.secret.name, File: { Name: BOOT_FILE, UID: '0', GID: '0', Mode: 0o400 } }],
  });
  // The secret's id is Swarm's (its name holds the content's hash): left out of the hash.
  const c = base.TaskTemplate.ContainerSpec;
  return withLabels(base, { ...base, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...c, Secrets: [{ ...c.Secrets[0], SecretID: '' }] } } }, i);
}

/** A node and a service as the edge plan reads them (the SwarmObjects port's rows). */
export type { SwarmNode as EdgePlanNode, SwarmServiceRow as EdgePlanService } from './swarm-objects.js';
