import { describe, expect, it } from 'vitest';
import { AGENTS_RESYNC_MS, createAgentsReconciler } from '../../../src/reconcilers/agents/reconciler.js';

describe('the node agents reconciler', () => {
  it('owns one key, makes the agents match on each pass and comes back in 30 s; an engine error goes to the queue (backoff)', async () => {
    let passes = 0;
    let fail = false;
    const r = createAgentsReconciler({
      reconcile: async () => {
        passes++;
        if (fail) throw new Error('engine down');
      },
    });
    expect(r.kind).toBe('agents');
    expect(await r.listNames()).toEqual(['main']);
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: AGENTS_RESYNC_MS });
    expect(AGENTS_RESYNC_MS).toBe(30_000);
    fail = true;
    await expect(r.reconcile('main')).rejects.toThrow('engine down');
    expect(passes).toBe(2);
  });
});
