// Pure: the two configs of an edge node (docs/decisions/0043-edge-nodes.md). Its Caddy gets exactly the
// manager's route plan (same listeners, same conflicts left out, same TLS policy) with every DNS upstream sent
// to the relay's socket in the shared volume, and its admin API on a socket there; its relay gets the manager
// relay's config for the same routes on its own sockets, resolving through the node's own resolver, without
// the agent server (the daemon reaches agents through the manager's relay only). Same input, same JSON.
import { buildCaddyConfig, configId, sortKeys, type CaddyConfigOptions, type Json } from './config.js';
import { buildEdgeConfig, viaEdge } from './edge-config.js';
import type { Route } from './proxy.js';
import { EDGE_NODE_SOCKETS, edgeBootConfig, edgeServiceName } from '../runtime/swarm-edge-spec.js';

/**
 * Pure: the edge node's Caddy config. `opts` are the manager's (ports, issuer, admin URL: its port stays
 * reserved so both plans agree); the TLS log and a storage directory are the manager's only (an edge node
 * keeps its certificates in its volume).
 */
export function edgeNodeProxyConfig(routes: Route[], opts: CaddyConfigOptions): Json {
  const base = buildCaddyConfig(viaEdge(routes, EDGE_NODE_SOCKETS.relay), { ...opts, tlsLog: undefined, storageDir: undefined }) as { [k: string]: Json };
  const apps = base.apps as { http: { [k: string]: Json } };
  const { '@id': _, ...http } = apps.http;
  const config: { [k: string]: Json } = { ...base, admin: (edgeBootConfig('proxy') as { admin: Json }).admin, apps: { ...(base.apps as { [k: string]: Json }), http } };
  http['@id'] = configId(config);
  return sortKeys(config);
}

/** Pure: the config of the edge node's relay for these routes (its resolver: the node's `dns` service). */
export function edgeNodeRelayConfig(routes: Route[], instance: string, nodeId: string): Json {
  return buildEdgeConfig(routes, edgeServiceName(instance, 'dns', nodeId), { socket: EDGE_NODE_SOCKETS.relay, adminSocket: EDGE_NODE_SOCKETS.relayAdmin });
}

/** The fingerprint id of a config built above (`GET /id/<id>/...` answers only while Caddy has exactly it). */
export const fingerprintOf = (config: Json): string => (config as { apps: { http: { '@id': string } } }).apps.http['@id'];
