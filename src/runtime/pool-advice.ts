// Pure: what to tell a user whose engine ran out of address pools for new networks. Every svc instance
// has a bridge network of its own, and an instance whose data directory was deleted leaves it behind;
// about thirty of them exhaust Docker's default pools, after which no instance or service can start.
// The message names the svc networks nothing uses and the commands that free them.

/** The engine's message when no pool is left for a new network. */
export const POOL_EXHAUSTED_RE = /could not find an available, non-overlapping IPv4 address pool/i;

export interface NetworkFact {
  name: string;
  labels: Record<string, string>;
  /** Running containers attached. */
  containers: number;
}

/** svc networks (labelled `svc.managed`) with no container attached, except `own`, by name. */
export function unusedSvcNetworks(networks: NetworkFact[], own: string): NetworkFact[] {
  return networks
    .filter((n) => n.labels['svc.managed'] === 'true' && n.containers === 0 && n.name !== own)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function poolAdvice(networks: NetworkFact[], own: string): string {
  const head = `Docker has no free address pool left for network ${own} (every default pool is taken by another network).`;
  const unused = unusedSvcNetworks(networks, own);
  if (unused.length === 0) {
    return (
      `${head} No unused svc network was found: remove networks you no longer need (\`docker network ls\`, ` +
      '`docker network rm NAME`; `docker network prune` removes every unused one), run `svc uninstall` in the data ' +
      'directory of an svc you no longer use, or give the engine more pools (default-address-pools in /etc/docker/daemon.json).'
    );
  }
  const names = unused.map((n) => n.name);
  return (
    `${head} ${names.length} svc network${names.length === 1 ? ' has' : 's have'} no container ` +
    `(left by svc instances whose data directory was deleted, or stopped ones): remove them with ` +
    `\`docker network rm ${names.join(' ')}\`, or run \`svc uninstall\` in the data directory of an svc you no longer use; then svc retries by itself.`
  );
}
