import { describe, expect, it } from 'vitest';
import { createEdgesReconciler, EDGES_RESYNC_MS } from '../../../src/reconcilers/edges/reconciler.js';

describe('the edge nodes reconciler', () => {
  it('owns one key, makes the edge services match on each pass, comes back in 30 s; tells the proxy after every pass (node events)', async () => {
    let changedNext = true;
    let told = 0;
    let fail = false;
    const r = createEdgesReconciler(
      {
        reconcile: async () => {
          if (fail) throw new Error('engine down');
          return { changed: changedNext };
        },
      },
      () => told++,
    );
    expect(r.kind).toBe('edges');
    expect(await r.listNames()).toEqual(['main']);
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: EDGES_RESYNC_MS });
    expect(told).toBe(1);
    // Reconciled again with nothing to change: the same answer; the proxy still reads the edge nodes again
    // (a pass follows a node event: a node down must stop being asked at once).
    changedNext = false;
    expect(await r.reconcile('main')).toEqual({ requeueAfterMs: EDGES_RESYNC_MS });
    expect(told).toBe(2);
    fail = true;
    await expect(r.reconcile('main')).rejects.toThrow('engine down');
    expect(told).toBe(2);
  });
});
