// Which Runtime the daemon drives (SVC_RUNTIME) and how health probes reach what it runs: the one engine's
// containers are on a bridge the host reaches directly; Swarm tasks are on an overlay only containers
// reach, so probes go through the helper on the overlay (src/runtime/swarm-probe.ts). The only place that
// knows which runtime there is.
import { dnsmasqPaths } from '../dns/dnsmasq.js';
import { filesOfTar, hostsFiles, hostsTar } from '../dns/hosts.js';
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createDockerRuntime } from '../runtime/docker.js';
import type { RegistryAuthLookup, Runtime } from '../runtime/runtime.js';
import { createSwarmRuntime } from '../runtime/swarm.js';
import { createHelperProbe } from '../runtime/swarm-probe.js';
import { createSwarmTerminal } from '../runtime/swarm-terminal.js';
import { createDockerTerminal } from '../runtime/docker-terminal.js';
import type { TerminalPort } from '../runtime/terminal.js';
import { ensureOwnRegistry, REGISTRY_BINARY } from '../cluster/registry.js';
import { existsSync } from 'node:fs';
import { httpProbe } from '../reconcilers/app/probe.js';
import { tcpOpen } from '../reconcilers/service/readiness.js';
import type { Mount } from '../runtime/runtime.js';
import { directEdge, relayedEdge, type ProxyParts } from '../proxy/edge-proxy.js';
import { createEdgeRelay } from '../proxy/edge-relay.js';
import { edgePaths } from '../proxy/edge-config.js';
import { createNodeAgents } from '../runtime/swarm-agents.js';
import { createAgentsReconciler } from '../reconcilers/agents/reconciler.js';
import { createEdgeNodes } from '../runtime/swarm-edges.js';
import { ownResolverImage } from '../runtime/resolver-image.js';
import { createSwarmObjects } from '../runtime/swarm-objects.js';
import { createEdgeFleet } from '../proxy/edge-nodes.js';
import { createRelayFetch } from '../proxy/relay-fetch.js';
import { createEdgesReconciler } from '../reconcilers/edges/reconciler.js';
import type { Reconciler } from '../controller/types.js';
import { deriveKey } from '../crypto.js';

export interface RuntimeWiring {
  runtime: Runtime;
  /** This host's engine (the manager's on Swarm): metrics and the terminal read containers that run here. */
  docker: Docker;
  /** Status of `GET url` as the proxy would reach it. */
  probe: (url: string, timeoutMs: number) => Promise<number | undefined>;
  tcpOpen: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
  /**
   * HTTP to a managed service's admin API (Garage's bucket and key setup): global fetch on one engine, through
   * the edge relay on a Swarm (the daemon's host is not on the overlay). Absent: global fetch.
   */
  serviceFetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /** Terminal sessions into app containers (on Swarm: other nodes' replicas through their agents). */
  terminal: TerminalPort;
  /** How the proxy reaches what the runtime runs: as it is on one engine, through the edge relay on a Swarm. */
  edge: (parts: ProxyParts) => ProxyParts;
  /** Extra mounts of the proxy container (the edge relay's socket directory on a Swarm); none on one engine. */
  proxyMounts?: Mount[];
  /** On a Swarm, the node agents' reconciler (`agents:main`; node events enqueue it). */
  agents?: Reconciler;
  /** On a Swarm, the edge nodes' reconciler (`edges:main`; node events enqueue it). */
  edges?: Reconciler;
}

/** `registryAuth`: the credentials svc holds per registry (src/desired/registries.ts), for every pull and Swarm service. */
export function wireRuntime(config: Config, log: Logger, registryAuth?: RegistryAuthLookup): RuntimeWiring {
  if (config.runtime.kind === 'docker') {
    const runtime = createDockerRuntime({ dockerHost: config.dockerHost, log, instance: config.instance, registryAuth });
    return { runtime, docker: runtime.docker, probe: httpProbe, tcpOpen, terminal: createDockerTerminal(runtime.docker, config.instance), edge: directEdge };
  }
  // Without SVC_REGISTRY, svc runs Debian's docker-registry on the manager when it is installed.
  const own = !config.runtime.registry && existsSync(REGISTRY_BINARY);
  if (!config.runtime.registry && !own) log.warn('SVC_REGISTRY is unset and docker-registry is not installed: built images stay on the manager (tasks of svc_build apps on other nodes cannot pull them)');
  const runtime = createSwarmRuntime({
    // `agents` is made below from this runtime's client; asked only once the daemon runs.
    agents: { client: (node) => agents.client(node) },
    diskImage: config.runtime.probeImage,
    dockerHost: config.dockerHost,
    log,
    instance: config.instance,
    registry: config.runtime.registry,
    registryAuth,
    ownRegistry: own ? (address) => ensureOwnRegistry({ dataDir: config.dataDir, address }) : undefined,
  });
  // Other nodes' engines, for exec and terminals, through an agent per node (docs/decisions/0041-node-agents.md).
  const paths = edgePaths(config.dataDir);
  const agentKey = deriveKey(config.encryptionKey, 'swarm node agents').toString('hex');
  const agents = createNodeAgents({ docker: runtime.docker, instance: config.instance, network: config.network, key: agentKey, agentSocket: paths.agentSocket });
  // The Swarm objects the agents:main and edges:main reconcilers keep (services and secrets on the manager).
  const swarm = createSwarmObjects({ docker: runtime.docker, selfNodeId: runtime.selfNodeId, ensureNetwork: () => runtime.ensureNetwork(config.network), registryAuth });
  const probe = createHelperProbe({ runtime, instance: config.instance, network: config.network, image: config.runtime.probeImage });
  const terminal = createSwarmTerminal({ docker: runtime.docker, selfNodeId: runtime.selfNodeId, local: createDockerTerminal(runtime.docker, config.instance), instance: config.instance, agents });
  // The edge: the host's Caddy keeps listeners and TLS, a relay on the overlay reaches the tasks, resolving
  // them through a resolver beside it (docs/decisions/0038-swarm-edge-relay.md, 0047-swarm-edge-resolves.md).
  const user = `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
  // SVC_RESOLVER_IMAGE, else svc's own, built from this host's dnsmasq and pushed to the registry (decision 0058).
  const given = config.runtime.resolverImage;
  const resolverImage = given ? async () => given : ownResolverImage({ runtime, clusterImage: (tag) => runtime.clusterImage(tag), log });
  const relay = createEdgeRelay({ runtime, image: config.proxy.image, resolverImage, instance: config.instance, network: config.network, hostsDir: dnsmasqPaths(config.dataDir).hostsDir, paths, user, log });
  // Nodes labelled svc.edge=true serve the routes too: their Caddy and relay, loaded through their agents (docs/decisions/0043-edge-nodes.md).
  const edgeNodes = createEdgeNodes({ docker: runtime.docker, instance: config.instance, network: config.network });
  const fleet = createEdgeFleet({ targets: () => edgeNodes.targets(), agentSocket: paths.agentSocket, key: agentKey, instance: config.instance, hosts: { files: hostsFiles, tar: hostsTar, read: filesOfTar }, proxy: config.proxy, log });
  return {
    runtime,
    docker: runtime.docker,
    probe,
    tcpOpen: probe.tcpOpen,
    serviceFetch: createRelayFetch(paths.agentSocket),
    terminal,
    edge: relayedEdge(relay, paths.socket, fleet),
    proxyMounts: [{ source: paths.dir, target: paths.dir }],
    agents: createAgentsReconciler({ swarm, instance: config.instance, network: config.network, image: config.proxy.image, key: agentKey, log }),
    edges: createEdgesReconciler({ swarm, instance: config.instance, network: config.network, image: config.proxy.image, resolverImage, log, passed: () => fleet.invalidate() }),
  };
}
