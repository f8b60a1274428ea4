// The network cache (src/runtime/network-cache.ts): a heal or deploy does not list the engine's networks
// before every create, and what the engine says (gone, or a container joined another network of that
// name) makes the next ensure ask again.
import { describe, expect, it } from 'vitest';
import { createNetworkCache } from '../../../src/runtime/network-cache.js';

/** An ensureOnce that counts its calls and answers the current id of each network. */
function engine() {
  const ids = new Map<string, string>([['svc', 'net-1']]);
  const calls: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  return {
    ids,
    calls,
    hold() {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => open();
    },
    ensureOnce: async (name: string) => {
      calls.push(name);
      await gate;
      if (!ids.has(name)) ids.set(name, `net-${ids.size + 1}`);
      return ids.get(name);
    },
  };
}

describe('network cache', () => {
  it('asks the engine once per network, however many heals follow', async () => {
    const e = engine();
    const cache = createNetworkCache(e.ensureOnce);
    await cache.ensure('svc');
    await cache.ensure('svc');
    await cache.ensure('other');
    await cache.ensure('svc');
    expect(e.calls).toEqual(['svc', 'other']);
  });

  it('one attempt at a time: concurrent ensures share it', async () => {
    const e = engine();
    const cache = createNetworkCache(e.ensureOnce);
    const open = e.hold();
    const both = Promise.all([cache.ensure('svc'), cache.ensure('svc')]);
    open();
    await both;
    expect(e.calls).toEqual(['svc']);
  });

  it('a failed ensure is not remembered', async () => {
    let fail = true;
    const calls: string[] = [];
    const cache = createNetworkCache(async (name) => {
      calls.push(name);
      if (fail) throw new Error('engine down');
      return 'net-1';
    });
    await expect(cache.ensure('svc')).rejects.toThrow('engine down');
    fail = false;
    await cache.ensure('svc');
    await cache.ensure('svc');
    expect(calls).toEqual(['svc', 'svc']);
  });

  it('forget (the engine said the network is gone): the next ensure asks again', async () => {
    const e = engine();
    const cache = createNetworkCache(e.ensureOnce);
    await cache.ensure('svc');
    expect(cache.forget('svc')).toBe(true);
    await cache.ensure('svc');
    expect(e.calls).toEqual(['svc', 'svc']);
    expect(cache.forget('overlay')).toBe(false); // never ensured here (a Swarm's overlay): not ours to make
  });

  it('a container joined another network of that name: ensured again (re-tuned), once', async () => {
    const e = engine();
    const cache = createNetworkCache(e.ensureOnce);
    await cache.ensure('svc');
    await cache.joined('svc', 'net-1'); // the one ensured: nothing to do
    expect(e.calls).toEqual(['svc']);
    e.ids.set('svc', 'net-9'); // removed and created again by someone else
    await cache.joined('svc', 'net-9');
    expect(e.calls).toEqual(['svc', 'svc']);
    await cache.joined('svc', 'net-9');
    await cache.ensure('svc');
    expect(e.calls).toEqual(['svc', 'svc']);
  });

  it('joined says nothing about a network this process never ensured, nor without an id', async () => {
    const e = engine();
    const cache = createNetworkCache(e.ensureOnce);
    await cache.joined('svc', 'net-7');
    await cache.ensure('svc');
    await cache.joined('svc', undefined);
    expect(e.calls).toEqual(['svc']);
  });
});
