// Pure: the node agents of a Swarm (docs/decisions/0041-node-agents.md). svc drives only the manager's
// engine; an agent is a Caddy on each other node, a Swarm service pinned there, that passes svc's exec calls
// and a container's inspect and archive (a directory as tar, read or written) to that node's engine socket.
// Its config is static (admin API disabled) and reaches the task as a Swarm secret, because it holds the
// key. Here: the config, the service's spec, the node label naming the socket, and the plan that makes the
// agents match the nodes. Same input, same output.
import { createHash } from 'node:crypto';
import { EDGE_ADMIN_HOST, EDGE_ADMIN_PREFIX, EDGE_DNS_DIR, EDGE_NODE_DIR, EDGE_PARTS, edgeAdminSocket, edgeDnsVolumeName, edgeVolumeName } from './swarm-edge-spec.js';

/** The agents' port on the instance's overlay (nothing else listens on it: one agent per task address). */
export const AGENT_PORT = 2380;
/** The header with svc's key: a request without it (or with another) is refused. */
export const AGENT_KEY_HEADER = 'Svc-Agent-Key';
/** The header telling the relay's agent server which agent (`<task address>:<port>`) to dial. */
export const AGENT_DIAL_HEADER = 'Svc-Agent-Dial';
/** Node label: the path of the node's engine socket (rootless Docker, the test cluster); default below. */
export const ENGINE_SOCKET_LABEL = 'svc.engine-socket';
export const DEFAULT_ENGINE_SOCKET = '/var/run/docker.sock';
/** Where the agent finds the node's engine inside its container. */
const SOCKET_IN_TASK = '/var/run/docker.sock';
/** The secret's file name inside the task (/run/secrets/<this>). */
const CONFIG_FILE = 'agent.json';
export const AGENT_ROLE = 'agent';
/** Label: the node an agent serves. */
export const AGENT_NODE_LABEL = 'svc.node';
/** Label: a hash of the agent's spec; another hash means a service update. */
export const AGENT_SPEC_LABEL = 'svc.agent-spec';

/** An engine API version prefix (docker-modem sends none unless told), then the path. */
const VERSION = '(/v[0-9]{1,2}\\.[0-9]{1,3})?';
/** A container name or id (the engine's grammar) and an exec id (64 hex). */
const CONTAINER = '[a-zA-Z0-9][a-zA-Z0-9_.-]*';
const EXEC = '[0-9a-f]{64}';
/**
 * The only endpoints an agent passes on: the engine's exec calls, and a container's inspect (read-only:
 * whether a task that exited 137 there was OOMKilled, which Swarm's task status does not say).
 */
export const AGENT_PATHS = {
  post: `^${VERSION}/(containers/${CONTAINER}/exec|exec/${EXEC}/(start|resize))$`,
  get: `^${VERSION}/(exec/${EXEC}|containers/${CONTAINER})/json$`,
  /**
   * A container's directory as a tar stream: GET reads it (a managed service's data directory on this node's
   * disk, for a backup), PUT unpacks a tar into it (a restore, through svc's own short-lived helper there;
   * docs/decisions/0042-service-data-on-other-nodes.md). Less than exec already allows.
   */
  archive: `^${VERSION}/containers/${CONTAINER}/archive$`,
} as const;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * Pure: Caddy's logging with the key taken out. Caddy's error log writes a failed request's headers (a
 * dial error of the relay, an engine that does not answer the agent), and redacts only the standard
 * credential headers by itself; the filter encoder deletes ours from every log line.
 */
export function keyRedactingLogs(): Json {
  return { logs: { default: { encoder: { format: 'filter', wrap: { format: 'json' }, fields: { [`request>headers>${AGENT_KEY_HEADER}`]: { filter: 'delete' } } } } } };
}

/**
 * Pure: the agent's whole Caddy config. `key`: hex of the 32 bytes derived from svc's sealing key. `at`:
 * only for tests running this config on the host (a loopback listener, the host's engine socket).
 */
export function agentConfig(key: string, at: { listen?: string; engineSocket?: string } = {}): Json {
  const keyed = { [AGENT_KEY_HEADER]: [key] };
  return {
    // Nothing to administer: the config changes only by a new secret and a service update.
    admin: { disabled: true, config: { persist: false } },
    logging: keyRedactingLogs(),
    apps: {
      http: {
        servers: {
          agent: {
            listen: [at.listen ?? `:${AGENT_PORT}`],
            automatic_https: { disable: true },
            routes: [
              {
                match: [
                  { header: keyed, method: ['POST'], path_regexp: { pattern: AGENT_PATHS.post } },
                  { header: keyed, method: ['GET'], path_regexp: { pattern: AGENT_PATHS.get } },
                  { header: keyed, method: ['GET', 'PUT'], path_regexp: { pattern: AGENT_PATHS.archive } },
                ],
                handle: [
                  {
                    handler: 'reverse_proxy',
                    // The engine never sees the key.
                    headers: { request: { delete: [AGENT_KEY_HEADER] } },
                    upstreams: [{ dial: `unix/${at.engineSocket ?? SOCKET_IN_TASK}` }],
                  },
                ],
                terminal: true,
              },
              // Edge nodes (docs/decisions/0043-edge-nodes.md): the admin APIs of the node's edge Caddy and relay.
              ...edgeAdminRoutes(keyed),
              { handle: [{ handler: 'static_response', status_code: 403, body: 'svc agent: forbidden\n' }], terminal: true },
            ],
          },
        },
      },
    },
  };
}

/**
 * Pure: the agent's routes to an edge node's two admin APIs (its Caddy's and its relay's: sockets in
 * the instance's volume, mounted into the agent of an edge node): `<prefix>/...` with the key goes to that
 * socket without the prefix and the key.
 * On a node that is not an edge the sockets do not exist: a 502.
 */
function edgeAdminRoutes(keyed: Record<string, string[]>): Json[] {
  return EDGE_PARTS.map((part): Json => ({
    match: [{ header: keyed, method: ['GET', 'POST'], path: [`${EDGE_ADMIN_PREFIX[part]}/*`] }],
    handle: [
      { handler: 'rewrite', strip_path_prefix: EDGE_ADMIN_PREFIX[part] } as Json,
      {
        handler: 'reverse_proxy',
        headers: { request: { delete: [AGENT_KEY_HEADER], set: { Host: [EDGE_ADMIN_HOST] } } },
        upstreams: [{ dial: `unix/${edgeAdminSocket(part)}` }],
        // An admin socket that is not there yet (the part starting) costs one bounded dial.
        transport: { protocol: 'http', dial_timeout: '2s' },
      },
    ],
    terminal: true,
  }));
}

/** Pure: the config as the secret's bytes, and the secret's name `<instance>-agent-<hash of the bytes>`. */
export function agentSecret(instance: string, key: string): { name: string; data: string } {
  const data = JSON.stringify(agentConfig(key));
  return { name: `${instance}-agent-${createHash('sha256').update(data).digest('hex').slice(0, 16)}`, data };
}

export const agentServiceName = (instance: string, nodeId: string) => `${instance}-agent-${nodeId.slice(0, 12)}`;

/**
 * Pure: the node's engine socket from its `svc.engine-socket` label (else the default). Throws when the label
 * is not a plain absolute path: it becomes a bind mount's source.
 */
export function engineSocketOf(labels: Record<string, string> | undefined): string {
  const v = labels?.[ENGINE_SOCKET_LABEL];
  if (v === undefined || v === '') return DEFAULT_ENGINE_SOCKET;
  if (v.length > 512 || !/^\/[A-Za-z0-9._/+-]+$/.test(v) || v.split('/').some((p) => p === '..' || p === '.') || v.includes('//') || v.endsWith('/')) {
    throw new Error(`node label ${ENGINE_SOCKET_LABEL}="${v.slice(0, 80)}" is not a plain absolute path (letters, digits, . _ - + and /, no "..")`);
  }
  return v;
}

export interface AgentSpecInput {
  instance: string;
  network: string;
  image: string;
  nodeId: string;
  /** The node's engine socket (engineSocketOf). */
  socket: string;
  secret: { id: string; name: string };
  /**
   * The node is an edge (`svc.edge=true`): the agent mounts the instance's edge volume to reach its admin
   * sockets, and the resolver's, where svc writes the hosts files through the engine (0047-swarm-edge-resolves.md).
   */
  edge?: boolean;
}

/** Pure: the agent's Swarm service (the spec's hash in a label), for one node. */
export function agentServiceSpec(i: AgentSpecInput) {
  const base = {
    Name: agentServiceName(i.instance, i.nodeId),
    TaskTemplate: {
      ContainerSpec: {
        Image: i.image,
        Command: ['/usr/bin/caddy'],
        Args: ['run', '--config', `/run/secrets/${CONFIG_FILE}`],
        // Root in the container: the engine's socket is root's (a rootless engine maps it to its own user).
        User: '0:0',
        Env: ['HOME=/tmp', 'XDG_DATA_HOME=/tmp/caddy-data', 'XDG_CONFIG_HOME=/tmp/caddy-config'],
        Mounts: [
          { Type: 'bind' as const, Source: i.socket, Target: SOCKET_IN_TASK },
          // Only on an edge node: elsewhere Swarm would make an empty volume on every node.
          ...(i.edge
            ? [
                { Type: 'volume' as const, Source: edgeVolumeName(i.instance), Target: EDGE_NODE_DIR },
                { Type: 'volume' as const, Source: edgeDnsVolumeName(i.instance), Target: EDGE_DNS_DIR },
              ]
            : []),
        ],
        Secrets: [{ SecretID: i.secret.id, SecretName: i.secret.name, File: { Name: CONFIG_FILE, UID: '0', GID: '0', Mode: 0o400 } }],
      },
      // Infrastructure, like the relay: Swarm restarts it by itself (svc does not heal it).
      RestartPolicy: { Condition: 'any', Delay: 2e9 },
      Placement: { Constraints: [`node.id==${i.nodeId}`] },
      Networks: [{ Target: i.network }],
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
  // The secret's id is Swarm's, not ours (the name holds the config's hash): left out of the hash.
  const hashed = { ...base, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...base.TaskTemplate.ContainerSpec, Secrets: [{ ...base.TaskTemplate.ContainerSpec.Secrets[0], SecretID: '' }] } } };
  const hash = createHash('sha256').update(JSON.stringify(hashed)).digest('hex').slice(0, 16);
  const Labels = { 'svc.managed': 'true', 'svc.instance': i.instance, 'svc.role': AGENT_ROLE, [AGENT_NODE_LABEL]: i.nodeId, [AGENT_SPEC_LABEL]: hash };
  return { ...base, Labels, TaskTemplate: { ...base.TaskTemplate, ContainerSpec: { ...base.TaskTemplate.ContainerSpec, Labels } } };
}

/** A node and a service as the plans read them (the SwarmObjects port's rows). */
export type { SwarmNode as PlanNode, SwarmServiceRow as PlanService } from './swarm-objects.js';
