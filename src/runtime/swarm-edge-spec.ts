// Pure: edge nodes of a Swarm (docs/decisions/0043-edge-nodes.md). A node labelled `svc.edge=true` serves
// every app's routes from its own address, as the manager does: three Swarm services of the instance pinned to
// it, a Caddy on the node's host network (listeners, TLS) and two relays on the overlay (reach the tasks; one
// loaded while the other serves, then swapped), that share a named volume holding the relays' sockets, the
// link the Caddy dials and the admin sockets. The daemon loads the configs through the node's agent (its
// config routes three path prefixes to those admin sockets, behind the key). Here: the
// label's meaning, the paths in the volume, the bootstrap configs, the services' specs and the plan that makes
// the services match the labels. Same input, same output.
import { createHash } from 'node:crypto';

/** Node label: `true` makes the node an edge (besides the manager, always one). */
export const EDGE_NODE_LABEL = 'svc.edge';
/** The admin APIs' allowed Host (a unix socket has no address of its own to check); the manager's relay uses it too. */
export const EDGE_ADMIN_HOST = 'svc-edge';
/** Where the volume is mounted in the edge node's Caddy, its relay and its agent. */
export const EDGE_NODE_DIR = '/svc-edge';
/**
 * The sockets in the volume: what the node's Caddy dials (`relay.sock`: a symlink with a relative target,
 * the active relay's listener, swapped as on the manager: docs/decisions/0039-two-relays-swapped.md), the Caddy's
 * admin API, and each relay's listener and admin API (`relay-admin.sock` was the single relay's of before).
 */
export const EDGE_NODE_SOCKETS = {
  relay: `${EDGE_NODE_DIR}/relay.sock`,
  proxyAdmin: `${EDGE_NODE_DIR}/proxy-admin.sock`,
} as const;
/** The file name of the link the node's Caddy dials, in the volume's root. */
export const EDGE_NODE_LINK = 'relay.sock';
/** Relay `a` is the service of the single relay of before (`relay`), `b` the second one (`relay-b`). */
export type EdgeRelayId = 'a' | 'b';
export const EDGE_RELAY_IDS: readonly EdgeRelayId[] = ['a', 'b'];
/** One relay's listener (relative to the volume: the link's target) and admin socket on an edge node. */
export const edgeNodeRelaySocketName = (id: EdgeRelayId) => `relay-${id}.sock`;
export const edgeNodeRelaySockets = (id: EdgeRelayId) => ({ socket: `${EDGE_NODE_DIR}/${edgeNodeRelaySocketName(id)}`, adminSocket: `${EDGE_NODE_DIR}/relay-admin-${id}.sock` });
/** The agent's path prefixes to those admin APIs (the daemon's calls: `<prefix>/load`, `<prefix>/config/`). */
export const EDGE_ADMIN_PREFIX = { proxy: '/svc-edge/proxy', relay: '/svc-edge/relay', 'relay-b': '/svc-edge/relay-b' } as const;
export type EdgePart = keyof typeof EDGE_ADMIN_PREFIX;
export const EDGE_PARTS: readonly EdgePart[] = ['proxy', 'relay', 'relay-b'];
/** The part of a relay, and the relay of a part. */
export const relayPart = (id: EdgeRelayId): EdgePart => (id === 'a' ? 'relay' : 'relay-b');
const relayOfPart = (part: Exclude<EdgePart, 'proxy'>): EdgeRelayId => (part === 'relay' ? 'a' : 'b');
/**
 * The services of an edge node: the three Caddy parts, and the swapper (busybox of the probe image, idle,
 * mounting the volume), in which svc renames a new link over `relay.sock` (rename(2): atomic). The engine's
 * archive endpoint alone cannot: it removes an entry before writing it, and a dial in between fails a POST
 * (Caddy 2.6 retries the dial with the body already closed: `invalid Read on closed Body`, measured).
 */
export type EdgeService = EdgePart | 'swap';
export const EDGE_SERVICES: readonly EdgeService[] = [...EDGE_PARTS, 'swap'];
/** Roles of the services (the Nodes page and the app reconcilers ignore them: infrastructure). */
export const EDGE_ROLES = { proxy: 'edge-proxy', relay: 'edge-relay', 'relay-b': 'edge-relay-b', swap: 'edge-swap' } as const;
/** A part's admin socket in the volume (what the agent's route to it dials). */
export const edgeAdminSocket = (part: EdgePart) => (part === 'proxy' ? EDGE_NODE_SOCKETS.proxyAdmin : edgeNodeRelaySockets(relayOfPart(part)).adminSocket);
/** Label: the node an edge service serves; and a hash of its spec (another hash means a service update). */
export const EDGE_NODE_OF = 'svc.node';
export const EDGE_SPEC_LABEL = 'svc.edge-spec';
/** The bootstrap's file name inside the task (/run/secrets/<this>). */
const BOOT_FILE = 'edge-boot.json';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The instance's volume on an edge node (local driver: Swarm creates it on that node at the first task). */
export const edgeVolumeName = (instance: string) => `${instance}-edge`;
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

/**
 * Pure: the swapper's Swarm service on one node: busybox of `probeImage` (SVC_PROBE_IMAGE, which the disk
 * helpers already need to have /bin/busybox) sleeping, the volume mounted, for svc's `mv` execs.
 */
export function edgeSwapperSpec(i: { instance: string; network: string; nodeId: string; probeImage: string }) {
  const base = {
    Name: edgeServiceName(i.instance, 'swap', i.nodeId),
    TaskTemplate: {
      ContainerSpec: {
        Image: i.probeImage,
        Command: ['/bin/busybox', 'sleep', '2147483647'],
        // Root: the link is root's (the engine's archive writes it), in a volume made by root.
        User: '0:0',
        Init: true,
        Mounts: [{ Type: 'volume' as const, Source: edgeVolumeName(i.instance), Target: EDGE_NODE_DIR }],
      },
      RestartPolicy: { Condition: 'any', Delay: 2e9 },
      Placement: { Constraints: [`node.id==${i.nodeId}`] },
      Networks: [{ Target: i.network }],
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
  return withLabels(base, base, { ...i, part: 'swap' });
}

/** Pure: one part's Swarm service on one node (its spec's hash in a label). */
export function edgeServiceSpec(i: EdgeSpecInput) {
  const part = i.part;
  // Each part its own HOME and XDG dirs: a relay must never `--resume` the other's autosave (nor, after the
  // upgrade to two, the single relay's of before, which listened on `relay.sock` itself).
  const home = `${EDGE_NODE_DIR}/${part === 'proxy' ? 'proxy' : `relay-${relayOfPart(part)}`}`;
  const base = {
    Name: edgeServiceName(i.instance, part, i.nodeId),
    TaskTemplate: {
      ContainerSpec: {
        Image: i.image,
        Command: ['/usr/bin/caddy'],
        // --resume: a restarted task (or node) serves the last config at once, without the daemon.
        Args: ['run', '--resume', '--config', `/run/secrets/${BOOT_FILE}`],
        // Root: the Caddy binds 80/443 on the node; both dial sockets in a volume made by root.
        User: '0:0',
        // The certificates (data) and the autosaved config live in the volume: they survive a new task.
        Env: [`HOME=${home}`, `XDG_DATA_HOME=${home}/data`, `XDG_CONFIG_HOME=${home}/config`],
        Mounts: [{ Type: 'volume' as const, Source: edgeVolumeName(i.instance), Target: EDGE_NODE_DIR }],
        Secrets: [{ SecretID: i.secret.id, SecretName: i.secret.name, File: { Name: BOOT_FILE, UID: '0', GID: '0', Mode: 0o400 } }],
      },
      // Infrastructure, like the agents: Swarm restarts it by itself.
      RestartPolicy: { Condition: 'any', Delay: 2e9 },
      Placement: { Constraints: [`node.id==${i.nodeId}`] },
      // The Caddy on the node's own network (its listeners are the node's ports); the relays on the overlay.
      Networks: [{ Target: part === 'proxy' ? 'host' : i.network }],
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
  // The secret's id is Swarm's (its name holds the content's hash): left out of the hash.
  const hashed = { ...base, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...base.TaskTemplate.ContainerSpec, Secrets: [{ ...base.TaskTemplate.ContainerSpec.Secrets[0], SecretID: '' }] } } };
  return withLabels(base, hashed, i);
}

/** A node and a service as the edge plan reads them (the SwarmObjects port's rows). */
export type { SwarmNode as EdgePlanNode, SwarmServiceRow as EdgePlanService } from './swarm-objects.js';
