import { describe, expect, it } from 'vitest';
import { createGate, GATED_RETRY_MS, gatedManager } from '../../../src/backup/quiesce.js';
import type { Reconciler } from '../../../src/controller/types.js';

function slowReconciler() {
  const seen: string[] = [];
  let release!: () => void;
  const r: Reconciler = {
    kind: 'app',
    listNames: () => ['a'],
    async reconcile(name) {
      seen.push(name);
      if (name === 'slow') await new Promise<void>((res) => (release = res));
      return {};
    },
  };
  return { r, seen, release: () => release() };
}

describe('gate', () => {
  it('pause waits for reconciles in flight, turns new ones away with a requeue, resume lets them through', async () => {
    const gate = createGate();
    const { r, seen, release } = slowReconciler();
    const gated = gate.wrap(r);
    const inflight = gated.reconcile('slow');
    let paused = false;
    const pausing = gate.pause().then(() => (paused = true));
    await new Promise((res) => setImmediate(res));
    expect(paused).toBe(false);
    release();
    await inflight;
    await pausing;
    expect(await gated.reconcile('b')).toEqual({ requeueAfterMs: GATED_RETRY_MS });
    expect(seen).toEqual(['slow']);
    gate.resume();
    expect(await gated.reconcile('b')).toEqual({});
    expect(seen).toEqual(['slow', 'b']);
  });

  it('gatedManager registers wrapped reconcilers and keeps the rest of the manager', () => {
    const registered: Reconciler[] = [];
    const manager = { register: (r: Reconciler) => void registered.push(r), enqueue: () => 'kept' };
    const g = gatedManager(manager, createGate());
    g.register(slowReconciler().r);
    expect(registered[0].kind).toBe('app');
    expect(g.enqueue()).toBe('kept');
  });
});
