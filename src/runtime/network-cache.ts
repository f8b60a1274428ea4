// Which networks this process has already ensured, so a heal or a deploy does not list the engine's
// networks (two `network ls` calls) before every container it creates. The engine is the truth: a start
// that fails because the network is gone forgets it (docker.ts then ensures it again and retries once),
// and a container that joined another network of that name (recreated by someone else) forgets the old
// id and ensures again, which re-tunes the new bridge (bridge-neighbours.ts).

export interface NetworkCache {
  /** Ensures `name` unless it was ensured before and nothing said it changed since; one attempt at a time per name. */
  ensure(name: string): Promise<void>;
  /**
   * The engine said `name` is gone: the next ensure asks it again. True when this cache had ensured it (only
   * then is making it again this runtime's business: a Swarm's overlay is not a bridge to create here).
   */
  forget(name: string): boolean;
  /**
   * A stopped container's start said a network of it is gone, naming only the old network's id: every name
   * ensured is asked again at its next ensure.
   */
  forgetAll(): void;
  /** A container started on `name` joined the network `id`: a different id than the one ensured means a new network. */
  joined(name: string, id: string | undefined): Promise<void>;
}

/** `ensureOnce` makes sure the network exists (and tunes it), answering its id. */
export function createNetworkCache(ensureOnce: (name: string) => Promise<string | undefined>): NetworkCache {
  const known = new Map<string, string | undefined>();
  const ensuring = new Map<string, Promise<void>>();

  const ensure = (name: string): Promise<void> => {
    if (known.has(name)) return Promise.resolve();
    let p = ensuring.get(name);
    if (!p) {
      p = ensureOnce(name)
        .then((id) => void known.set(name, id))
        .finally(() => ensuring.delete(name));
      ensuring.set(name, p);
    }
    return p;
  };

  return {
    ensure,
    forget: (name) => known.delete(name),
    forgetAll: () => known.clear(),
    async joined(name, id) {
      if (id === undefined || !known.has(name) || known.get(name) === id) return;
      known.delete(name);
      await ensure(name);
    },
  };
}
