// How the Swarm edge slots in without the rest of svc knowing (docs/decisions/0038-swarm-edge-relay.md): the proxy
// parts the daemon wires (routes, the drain's in-flight counts, the DNS writer, the runner) are wrapped once. The
// host's Caddy sends every DNS upstream to the relay; the drain counts what both have in flight; "the proxy runs"
// means both run. On one engine the parts are used as they are.
import type { EdgeRelay } from './edge-relay.js';
import { viaEdge, type DnsRecords } from './edge-config.js';
import type { Proxy } from './proxy.js';
import type { EdgeFleet } from './edge-nodes.js';

export interface ProxyParts {
  /** What the proxy reconciler converges to the routes. */
  routes: Proxy;
  /** What the app reconciler asks for in-flight requests while draining a replica. */
  drain: Pick<Proxy, 'upstreamRequests'>;
  /** Writes the DNS answers (every app's live addresses). */
  writeDns: (records: DnsRecords) => Promise<void>;
  /** Starts what must run (container and host modes), never waiting; undefined in external mode. */
  ensureRunning?: () => Promise<'running' | 'starting' | void>;
}

/** The identity: a single engine's containers are reachable from the host's Caddy as they are. */
export const directEdge = (p: ProxyParts): ProxyParts => p;

/**
 * The parts wrapped so the host's Caddy reaches tasks through the relay on its unix socket. `fleet`: the edge
 * nodes (`svc.edge=true`, docs/decisions/0043-edge-nodes.md), given the same routes and addresses; they never hold
 * the manager's pass (loaded in the background) nor a switch (bounded wait).
 */
export function relayedEdge(relay: EdgeRelay, socket: string, fleet?: EdgeFleet): (p: ProxyParts) => ProxyParts {
  return (p) => ({
    routes: {
      async apply(routes) {
        // The relay first: the host's Caddy never sends to a relay that does not know the route yet.
        await relay.applyRoutes(routes);
        await p.routes.apply(viaEdge(routes, socket));
        fleet?.setRoutes(routes);
      },
      async serves(routes) {
        // Every pass looks at the edge nodes too (in the background; a node that does not serve is loaded).
        fleet?.check();
        return (await relay.serves(routes)) && (await p.routes.serves(viaEdge(routes, socket)));
      },
      heldPorts: p.routes.heldPorts && (() => p.routes.heldPorts!()),
      upstreamRequests: () => p.routes.upstreamRequests(),
    },
    drain: {
      async upstreamRequests() {
        const [host, edge, nodes] = await Promise.all([p.drain.upstreamRequests(), relay.upstreamRequests(), fleet?.upstreamRequests()]);
        for (const counts of [edge, nodes ?? new Map<string, number>()]) for (const [k, v] of counts) host.set(k, (host.get(k) ?? 0) + v);
        return host;
      },
    },
    async writeDns(records) {
      // The manager's resolver reads the files this writes; the edge nodes' resolvers get them through their agents.
      await p.writeDns(records);
      await fleet?.setRecords(records);
    },
    async ensureRunning() {
      const host = await p.ensureRunning?.();
      const edge = await relay.ensureRunning();
      return host === 'starting' || edge === 'starting' ? 'starting' : 'running';
    },
  });
}
