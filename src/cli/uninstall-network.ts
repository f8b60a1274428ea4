// Pure: who still uses the instance's network when `svc uninstall` is about to remove it. On a Swarm the
// overlay's Containers map also holds the node's load-balancer endpoint (key `lb-<network>`, name
// `<network>-endpoint`) once any container of this node was attached, the edge relay `<instance>-edge`
// included; it is the network's own, goes with it, and is no reason to keep the network.

/** One entry of `docker network inspect`'s Containers map. */
export interface NetworkEntry {
  Name: string;
}

/**
 * Names of the containers other than the network's own load-balancer endpoint. Both marks are required:
 * a container's key is its id (hex), never `lb-...`, so a container that merely has that name still counts.
 */
export function networkUsers(network: string, containers: Record<string, NetworkEntry> | null | undefined): string[] {
  return Object.entries(containers ?? {})
    .filter(([key, c]) => !(key === `lb-${network}` && c.Name === `${network}-endpoint`))
    .map(([, c]) => c.Name);
}
