// Pure: svc's DNS answers served on a Swarm's overlay (docs/decisions/0047-swarm-edge-resolves.md). The relays
// resolve `<app>.svc.internal` as the host's Caddy does (dynamic upstreams), through a resolver container
// beside them: Debian's dnsmasq of SVC_RESOLVER_IMAGE with the same hosts files the host's responder reads
// (src/dns/dnsmasq.ts), on the manager its `data/proxy/dns` mounted read-only, on an edge node a directory of the
// node's edge volume that svc writes through the node's agent. A switch changes a file; no config is loaded.

/** Where dnsmasq listens in its container (every address of it: the overlay is the only way in). */
export const RESOLVER_PORT = 53;

/**
 * Pure: dnsmasq's arguments in the resolver container, as the host's responder's (dnsmasqArgs) minus the host's
 * parts. `keepUser`: stay the container's user (as root dnsmasq drops to nobody, who cannot read svc's own
 * mode-600 files); without it, as root, it drops to nobody (files written world-readable).
 */
export function resolverArgs(hostsDir: string, keepUser = false): string[] {
  return [...(keepUser ? ['--user=root'] : []), '--conf-file=/dev/null', '--keep-in-foreground', `--port=${RESOLVER_PORT}`, '--no-resolv', '--no-hosts', '--local=/svc.internal/', '--cache-size=0', `--hostsdir=${hostsDir}`, '--log-facility=-', '--pid-file='];
}

/** Pure: the relay's `resolver.addresses` for a resolver reached by its name on the overlay (Docker's DNS names it). */
export const resolverAddress = (name: string) => `udp/${name}:${RESOLVER_PORT}`;
