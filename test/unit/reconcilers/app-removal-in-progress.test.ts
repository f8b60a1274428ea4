// The engine still removing a container (`docker rm -f` racing svc) is not a wait inside the reconcile
// (DESIGN.md rule 3) and not a failure: heal moves it aside and recreates at once; when even that is
// refused, the pass comes back shortly.
import { describe, expect, it } from 'vitest';
import { listAppEvents } from '../../../src/store/deploys.js';
import { RemovalInProgressError, REMOVAL_RETRY_MS } from '../../../src/runtime/runtime.js';
import { AppHarness } from '../../support/app-harness.js';

describe('a removal in progress', () => {
  it('heal moves the container being removed aside and recreates under its name at once (no wait for the engine)', async () => {
    const h = new AppHarness();
    await h.deployed();
    const before = h.rt.containers.get('svc-web-1')!.id;
    h.rt.kill('svc-web-1');
    h.rt.containers.get('svc-web-1')!.state = 'removing';
    await h.rec.reconcile('web');
    const now = h.rt.containers.get('svc-web-1')!;
    expect(now.state).toBe('running');
    expect(now.id).not.toBe(before);
    // The old one, renamed aside, is still the engine's to finish; nothing in svc tracks it.
    const aside = [...h.rt.containers.values()].filter((c) => c.id === before);
    expect(aside.map((c) => [c.spec.name.startsWith('gone-') && c.spec.name.endsWith('-svc-web-1'), c.state])).toEqual([[true, 'removing']]);
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was gone; recreated']);
    expect(h.app().healFailures).toBe(0);
    // The next passes see it as an orphan the engine is already removing: not an error.
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      if (name.startsWith('gone-')) throw new RemovalInProgressError(name);
      return remove(name);
    };
    await expect(h.rec.reconcile('web')).resolves.toBeDefined();
    h.rt.remove = remove;
    h.rt.finishRemovals();
    await h.drive();
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-1']);
    await h.expectSteady();
  });

  it('heal requeues shortly with no error event and no counted failure when the name cannot be freed yet, then recreates', async () => {
    const h = new AppHarness();
    await h.deployed();
    h.rt.kill('svc-web-1');
    h.rt.containers.get('svc-web-1')!.state = 'removing';
    const freeName = h.rt.freeName.bind(h.rt);
    h.rt.freeName = async (name: string) => {
      h.rt.freeName = freeName; // the engine finishes after this one answer
      throw new RemovalInProgressError(name);
    };
    expect(await h.rec.reconcile('web')).toEqual({ requeueAfterMs: REMOVAL_RETRY_MS });
    expect(listAppEvents(h.db, h.app().id)).toEqual([]);
    expect(h.app().healFailures).toBe(0);

    h.rt.finishRemovals();
    await h.drive();
    expect(h.rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was gone; recreated']);
    await h.expectSteady();
  });

  it('a deploy step requeues shortly instead of failing the deploy', async () => {
    const h = new AppHarness();
    h.makeApp();
    const d = h.deploy('web:1');
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      h.rt.remove = remove;
      throw new RemovalInProgressError(name);
    };
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' });
    expect(h.dep(d.id).status).toBe('success');
    expect(h.rt.remove).toBe(remove); // the in-progress answer was met (in the create step) and passed
  });
});
